// Reads the agent's side of `docker attach`: Docker multiplexes stdout and stderr into frames (1 byte
// stream, 3 zero bytes, 4 bytes big-endian length, payload), and the agent writes one JSON reply per
// stdout line. Anything in the container running as the agent's uid can write there too, so nothing
// here trusts the bytes: payloads are passed on as they arrive (a huge frame is never gathered in one
// buffer) and a line past `maxLineBytes` is an error rather than a growing buffer.

const HEADER_BYTES = 8;
const STDOUT = 1;

export type FrameSink = {
  line(text: string): void;
  stderr(chunk: Buffer): void;
  /** A stdout line went past the cap; the reader keeps nothing of it and stops. */
  oversized(bytes: number): void;
};

export class FrameReader {
  private header = Buffer.alloc(0);
  private remaining = 0;
  private stream = 0;
  private lineParts: Buffer[] = [];
  private lineBytes = 0;
  private stopped = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly sink: FrameSink,
  ) {}

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && !this.stopped) {
      if (this.remaining === 0) {
        const needed = HEADER_BYTES - this.header.length;
        this.header = Buffer.concat([this.header, chunk.subarray(offset, offset + needed)]);
        offset += Math.min(needed, chunk.length - offset);
        if (this.header.length < HEADER_BYTES) return;
        this.stream = this.header[0] ?? 0;
        this.remaining = this.header.readUInt32BE(4);
        this.header = Buffer.alloc(0);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - offset);
      const piece = chunk.subarray(offset, offset + take);
      offset += take;
      this.remaining -= take;
      if (this.stream === STDOUT) this.stdout(piece);
      else this.sink.stderr(piece);
    }
  }

  private stdout(piece: Buffer): void {
    let start = 0;
    while (!this.stopped) {
      const newline = piece.indexOf(10, start);
      const end = newline === -1 ? piece.length : newline;
      this.lineBytes += end - start;
      if (this.lineBytes > this.maxLineBytes) {
        this.stopped = true;
        this.lineParts = [];
        this.sink.oversized(this.lineBytes);
        return;
      }
      if (end > start) this.lineParts.push(piece.subarray(start, end));
      if (newline === -1) return;
      const line = Buffer.concat(this.lineParts).toString("utf8");
      this.lineParts = [];
      this.lineBytes = 0;
      start = newline + 1;
      this.sink.line(line);
    }
  }
}
