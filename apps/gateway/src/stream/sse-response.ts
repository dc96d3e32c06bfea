import { once } from "node:events";
import type { ServerResponse } from "node:http";
import type { SessionEvent, StreamDelta } from "@wakeloop/contracts";

export interface SseResponse {
  /** `id:` is the seq, so a reconnecting client's `Last-Event-ID` is where to resume. */
  event(event: SessionEvent): Promise<void>;
  /**
   * A live delta, without `id:` (it is not stored, so nothing can resume from it). Never waits: while
   * the client is behind (the socket's buffer is full) the delta is dropped and this answers false;
   * the stored events that follow carry the whole answer.
   */
  delta(delta: StreamDelta): boolean;
  comment(text: string): Promise<void>;
  end(): void;
}

/**
 * A Server-Sent Events response on the raw socket. Writes wait for `drain` when the client reads
 * slower than we write, so a slow client holds back its own stream instead of filling our memory;
 * `signal` (client gone, server closing) releases a write stuck waiting.
 */
export function openSseResponse(raw: ServerResponse, signal: AbortSignal): SseResponse {
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    // Reverse proxies such as nginx buffer responses unless told otherwise.
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();

  const write = async (chunk: string) => {
    if (raw.writableEnded || raw.destroyed) throw new Error("the event stream is closed");
    if (!raw.write(chunk)) await once(raw, "drain", { signal });
  };
  return {
    // JSON.stringify never emits a raw newline, so the event is one `data:` line.
    event: (event) => write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
    delta: (delta) => {
      if (raw.writableEnded || raw.destroyed || raw.writableNeedDrain) return false;
      raw.write(`event: ${delta.type}\ndata: ${JSON.stringify(delta)}\n\n`);
      return true;
    },
    comment: (text) => write(`: ${text}\n\n`),
    end: () => {
      if (!raw.writableEnded) raw.end();
    },
  };
}
