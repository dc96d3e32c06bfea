import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";
import { LivePreview } from "@wakeloop/sdk";
import { contentText } from "./format";

/**
 * Prints the model's answer as it is written (from the stream's live deltas), then completes it when
 * the stored `agent.message` arrives instead of printing it again. Where the preview fell short (a
 * dropped delta, a retry that started over, an answer cut off by an interrupt) the line is ended and
 * the stored text, which is the answer, is printed whole.
 */
export class LiveAnswer {
  readonly #preview = new LivePreview();
  readonly #out: NodeJS.WritableStream;
  /** What of the preview is on the screen, on a line not yet ended. */
  #printed = "";

  constructor(out: NodeJS.WritableStream) {
    this.#out = out;
  }

  /** An answer is on the screen mid-line: nothing else should write to the terminal now. */
  get writing(): boolean {
    return this.#printed !== "";
  }

  /** Takes the next item of the stream; true when it is printed here (a delta, or the message it completed). */
  take(item: SessionEvent | StreamDelta): boolean {
    if (item.type === "agent.message") {
      this.#preview.apply(item);
      const printed = this.#printed;
      this.#printed = "";
      if (printed === "") return false;
      const text = contentText(item.content);
      this.#out.write(text.startsWith(printed) ? `${text.slice(printed.length)}\n` : `\n${text}\n`);
      return true;
    }
    if (this.#preview.apply(item)) {
      const text = this.#preview.text;
      if (text.startsWith(this.#printed)) this.#out.write(text.slice(this.#printed.length));
      else this.#out.write(this.#printed === "" ? text : `\n${text}`);
      this.#printed = text;
    }
    return "ephemeral" in item;
  }
}
