import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DevtoolsLimitError,
  devtoolsGuard,
  MAX_HANDSHAKE_BYTES,
  withoutCompressionOffer,
} from "./devtools-guard";

const BOUNDS = { maxMessageBytes: 300, maxEventBytes: 100 };
const HEAD = Buffer.from(
  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
);

/** A CDP answer or event of `size` bytes in all. */
function answer(size: number): Buffer {
  return Buffer.from(`{"id":1,"result":"${"a".repeat(Math.max(0, size - 20))}"}`.padEnd(size, " "));
}
function event(size: number): Buffer {
  return Buffer.from(
    `{"method":"Runtime.consoleAPICalled","x":"${"a".repeat(Math.max(0, size - 50))}"}`.padEnd(size, " "),
  );
}

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
async function through(bytes: Buffer, cuts: number[]): Promise<Buffer | Error> {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    if (point > from) chunks.push(bytes.subarray(from, point));
    from = Math.max(from, point);
  }
  const out: Buffer[] = [];
  try {
    for await (const chunk of Readable.from(chunks).pipe(devtoolsGuard(BOUNDS))) out.push(chunk as Buffer);
  } catch (error) {
    return error as Error;
  }
  return Buffer.concat(out);
}

describe("devtoolsGuard", () => {
  it("passes the handshake and frames within bounds unchanged, however they are cut", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 300 })), { maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (messages, cuts) => {
          const frames = messages.map(([isAnswer, size]) =>
            isAnswer ? frame(1, answer(size)) : frame(1, event(Math.min(size, 100))),
          );
          // An answer in fragments, with a ping between them.
          const split = answer(250);
          frames.push(frame(1, split.subarray(0, 3), true), frame(9, Buffer.from("ping")));
          frames.push(frame(0, split.subarray(3, 100), true), frame(0, split.subarray(100)));
          const bytes = Buffer.concat([HEAD, ...frames, frame(9, Buffer.from("ping"))]);
          expect(await through(bytes, cuts)).toEqual(bytes);
        },
      ),
    );
  });

  it("cuts an answer, an event, a fragmented message, a control frame or a handshake past its bound", async () => {
    const cases = [
      Buffer.concat([HEAD, frame(1, answer(301))]),
      Buffer.concat([HEAD, frame(1, answer(200), true), frame(0, Buffer.alloc(200))]),
      // A page's console message: not an answer, so held to the event bound.
      Buffer.concat([HEAD, frame(1, event(101))]),
      Buffer.concat([HEAD, frame(1, event(60), true), frame(0, Buffer.alloc(60, 32))]),
      Buffer.concat([HEAD, frame(9, Buffer.alloc(126))]),
      // Compressed (RSV1): its size says nothing about what it inflates to, and none was negotiated.
      Buffer.concat([HEAD, Buffer.from([0xc1, 2, 0x4b, 0x04])]),
      // A length no one could send, announced up front: cut at the header, before any payload.
      Buffer.concat([HEAD, Buffer.from([0x82, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]),
      Buffer.alloc(MAX_HANDSHAKE_BYTES + 1, 65),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cases),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (bytes, cuts) => {
          expect(await through(bytes, cuts)).toBeInstanceOf(DevtoolsLimitError);
        },
      ),
    );
  });

  it("never hands on a whole message past a bound: the cut comes before its last byte", async () => {
    const bytes = Buffer.concat([HEAD, frame(1, event(5_000))]);
    const out: Buffer[] = [];
    const guard = devtoolsGuard(BOUNDS);
    guard.on("data", (chunk: Buffer) => out.push(chunk));
    const failed = new Promise((resolve) => guard.on("error", resolve));
    for (let at = 0; at < bytes.length; at += 7) guard.write(bytes.subarray(at, at + 7));
    expect(await failed).toBeInstanceOf(DevtoolsLimitError);
    expect(Buffer.concat(out).length).toBeLessThan(HEAD.length + 4 + 5_000);
  });

  it("takes the compression offer out of the upgrade request, however it is cut, and passes the rest", async () => {
    const request = Buffer.from(
      "GET /devtools/browser/x HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n" +
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\nSec-WebSocket-Key: k\r\n\r\n",
    );
    const after = frame(1, Buffer.from('{"id":1,"method":"Browser.getVersion"}'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 6 }), async (cuts) => {
        const bytes = Buffer.concat([request, after]);
        const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points, bytes.length].flatMap((point, i, all) =>
          i === 0 ? [] : [bytes.subarray(all[i - 1], point)],
        );
        const out: Buffer[] = [];
        for await (const chunk of Readable.from(chunks).pipe(withoutCompressionOffer()))
          out.push(chunk as Buffer);
        const text = Buffer.concat(out).toString("latin1");
        expect(text).not.toMatch(/sec-websocket-extensions/i);
        expect(text).toContain("Sec-WebSocket-Key: k\r\n\r\n");
        expect(Buffer.concat(out).subarray(-after.length)).toEqual(after);
      }),
    );
  });
});
