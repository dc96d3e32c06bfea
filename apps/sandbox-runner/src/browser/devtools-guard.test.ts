import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DevtoolsLimitError, devtoolsGuard, MAX_HANDSHAKE_BYTES } from "./devtools-guard";

const HEAD = Buffer.from(
  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
);

/** A server frame (unmasked) with `opcode` and `payload`, FIN set unless `more`. */
function frame(opcode: number, payload: Buffer, more = false): Buffer {
  const first = (more ? 0 : 0x80) | opcode;
  if (payload.length < 126) return Buffer.concat([Buffer.from([first, payload.length]), payload]);
  if (payload.length < 65_536) {
    const header = Buffer.from([first, 126, 0, 0]);
    header.writeUInt16BE(payload.length, 2);
    return Buffer.concat([header, payload]);
  }
  const header = Buffer.alloc(10);
  header[0] = first;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(payload.length), 2);
  return Buffer.concat([header, payload]);
}

/** Feeds `bytes` in chunks cut at `cuts`; the bytes that passed, or the error. */
async function through(bytes: Buffer, cuts: number[], max: number): Promise<Buffer | Error> {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    if (point > from) chunks.push(bytes.subarray(from, point));
    from = Math.max(from, point);
  }
  const out: Buffer[] = [];
  try {
    for await (const chunk of Readable.from(chunks).pipe(devtoolsGuard(max))) out.push(chunk as Buffer);
  } catch (error) {
    return error as Error;
  }
  return Buffer.concat(out);
}

describe("devtoolsGuard", () => {
  it("passes the handshake and frames within bounds unchanged, however they are cut", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (sizes, cuts) => {
          const frames = sizes.map((size, i) => frame(i === 0 ? 1 : 2, Buffer.alloc(size, 7)));
          const bytes = Buffer.concat([HEAD, ...frames, frame(9, Buffer.from("ping"))]);
          expect(await through(bytes, cuts, 300)).toEqual(bytes);
        },
      ),
    );
  });

  it("cuts a frame, a fragmented message, a control frame or a handshake past its bound", async () => {
    const cases = [
      Buffer.concat([HEAD, frame(1, Buffer.alloc(301))]),
      Buffer.concat([HEAD, frame(1, Buffer.alloc(200), true), frame(0, Buffer.alloc(200))]),
      Buffer.concat([HEAD, frame(9, Buffer.alloc(126))]),
      // A length no one could send, announced up front: cut at the header, before any payload.
      Buffer.concat([HEAD, Buffer.from([0x82, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]),
      Buffer.alloc(MAX_HANDSHAKE_BYTES + 1, 65),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cases),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (bytes, cuts) => {
          expect(await through(bytes, cuts, 300)).toBeInstanceOf(DevtoolsLimitError);
        },
      ),
    );
  });
});
