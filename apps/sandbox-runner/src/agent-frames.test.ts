import { describe, expect, it } from "vitest";
import { FrameReader } from "./agent-frames";

function frame(stream: number, payload: string | Buffer): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

function reader(maxLineBytes = 64) {
  const seen = { lines: [] as string[], stderr: "", oversized: [] as number[] };
  const frames = new FrameReader(maxLineBytes, {
    line: (text) => seen.lines.push(text),
    stderr: (chunk) => {
      seen.stderr += chunk.toString();
    },
    oversized: (bytes) => seen.oversized.push(bytes),
  });
  return { frames, seen };
}

describe("FrameReader", () => {
  it("splits stdout into lines across frames and chunk boundaries, and passes stderr on", () => {
    const { frames, seen } = reader();
    const bytes = Buffer.concat([frame(1, '{"id":1}\n{"id'), frame(2, "warn"), frame(1, '":2}\n')]);
    for (let index = 0; index < bytes.length; index += 3) frames.push(bytes.subarray(index, index + 3));
    expect(seen.lines).toEqual(['{"id":1}', '{"id":2}']);
    expect(seen.stderr).toBe("warn");
  });

  it("stops at a line past the cap instead of buffering it, even spread over many frames", () => {
    const { frames, seen } = reader(64);
    frames.push(frame(1, "ok\n"));
    for (let index = 0; index < 100; index++) frames.push(frame(1, "x".repeat(10)));
    frames.push(frame(1, "\nlater\n"));
    expect(seen.lines).toEqual(["ok"]);
    expect(seen.oversized).toEqual([70]);
  });

  it("hands on a frame's payload as it arrives, before the whole frame is in", () => {
    const { frames, seen } = reader(1_024);
    const big = frame(1, `${"y".repeat(500)}\n`);
    frames.push(big.subarray(0, 300));
    frames.push(big.subarray(300));
    expect(seen.lines).toEqual(["y".repeat(500)]);
  });
});
