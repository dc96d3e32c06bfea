// Output of one command (stdout and stderr interleaved in arrival order, as a terminal shows them).
// Offsets are absolute character positions since the command started, so paging stays stable while a
// background process keeps writing; past `cap` characters the oldest output is dropped.
import { StringDecoder } from "node:string_decoder";
import type { AgentOutputPage } from "@wakeloop/contracts";

const DEFAULT_CAP = 4_000_000;

export class OutputBuffer {
  private text = "";
  private dropped = 0;
  private readonly decoders = new Map<string, StringDecoder>();

  constructor(private readonly cap = DEFAULT_CAP) {}

  /** Appends a chunk from `stream` (each stream decodes UTF-8 on its own so split characters survive). */
  push(stream: string, chunk: Buffer): void {
    let decoder = this.decoders.get(stream);
    if (decoder === undefined) {
      decoder = new StringDecoder("utf8");
      this.decoders.set(stream, decoder);
    }
    this.append(decoder.write(chunk));
  }

  append(text: string): void {
    if (text.length === 0) return;
    this.text += text;
    if (this.text.length > this.cap) {
      const excess = this.text.length - this.cap;
      this.text = this.text.slice(excess);
      this.dropped += excess;
    }
  }

  get total(): number {
    return this.dropped + this.text.length;
  }

  /** Characters [offset, offset+limit) that are still held; `from` says where the page really starts. */
  page(offset: number, limit: number): AgentOutputPage {
    const from = Math.max(offset, this.dropped);
    const text = this.text.slice(from - this.dropped, from - this.dropped + limit);
    return { from, text, total: this.total, dropped: this.dropped };
  }

  /** The last `limit` characters. */
  tail(limit: number): AgentOutputPage {
    const from = Math.max(this.dropped, this.total - limit);
    return this.page(from, limit);
  }
}
