import type { SessionEvent } from "@wakeloop/contracts";
import { LivePreview } from "@wakeloop/sdk";
import { useEffect, useState } from "react";
import { type Client, describeError } from "../api";

export interface EventStream {
  events: SessionEvent[];
  /** The answer the model is writing now ("" when none): shown until its stored agent.message arrives. */
  preview: string;
  error: string | null;
}

/**
 * The session's events from the first on, live over SSE, with the model's live deltas. The SDK's
 * stream reconnects by itself with `Last-Event-ID` set to the last seq it delivered, so a dropped
 * connection loses and repeats no stored event (deltas are a preview and are not resent).
 */
export function useEventStream(client: Client, sessionId: string): EventStream {
  const [stream, setStream] = useState<EventStream>({ events: [], preview: "", error: null });
  useEffect(() => {
    const stop = new AbortController();
    const events: SessionEvent[] = [];
    const preview = new LivePreview();
    // Items that arrive together (a long history on open, a burst of deltas) become one render.
    let flush: ReturnType<typeof setTimeout> | undefined;
    setStream({ events: [], preview: "", error: null });
    (async () => {
      for await (const item of client.events.stream(sessionId, { signal: stop.signal, deltas: true })) {
        const changed = preview.apply(item);
        if ("ephemeral" in item) {
          if (!changed) continue;
        } else events.push(item);
        flush ??= setTimeout(() => {
          flush = undefined;
          setStream({ events: [...events], preview: preview.text, error: null });
        }, 0);
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) setStream((previous) => ({ ...previous, error: describeError(error) }));
    });
    return () => {
      stop.abort();
      clearTimeout(flush);
    };
  }, [client, sessionId]);
  return stream;
}
