import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";

/** Ended requests remembered, so a late delta of one is not taken for a new answer. */
const ENDED_KEPT = 32;

/**
 * The text the model is writing, from a stream's live deltas, until the stored events replace it.
 * A session runs one model request at a time (one writer per session), so there is one preview: it
 * starts with a request's first text delta, starts over when the request is retried (a higher
 * `attempt`), and ends with the request's stored `agent.message` or `span.model_request_end` (they
 * commit together). Deltas of an ended request are ignored; tool-argument deltas are not text.
 */
export class LivePreview {
  #request: string | null = null;
  #attempt = 0;
  #text = "";
  readonly #ended = new Set<string>();

  /** What is written so far of the answer in progress; "" when none is. */
  get text(): string {
    return this.#text;
  }

  /** Takes the next item of a stream; true when `text` changed. */
  apply(item: SessionEvent | StreamDelta): boolean {
    switch (item.type) {
      case "agent.message_delta":
        return this.#delta(item);
      case "agent.message":
        return this.#end(this.#request);
      case "span.model_request_end":
        return this.#end(item.model_request_start_id);
      default:
        return false;
    }
  }

  #delta(delta: Extract<StreamDelta, { type: "agent.message_delta" }>): boolean {
    if (this.#ended.has(delta.model_request_start_id)) return false;
    if (delta.model_request_start_id !== this.#request || delta.attempt > this.#attempt) {
      this.#request = delta.model_request_start_id;
      this.#attempt = delta.attempt;
      this.#text = "";
    } else if (delta.attempt < this.#attempt) return false;
    this.#text += delta.text;
    return delta.text !== "";
  }

  #end(request: string | null): boolean {
    if (request !== null) {
      this.#ended.add(request);
      if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.values().next().value as string);
    }
    const changed = this.#text !== "";
    this.#request = null;
    this.#attempt = 0;
    this.#text = "";
    return changed;
  }
}
