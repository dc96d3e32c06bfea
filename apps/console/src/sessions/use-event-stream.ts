import type { SessionEvent } from "@wakeloop/contracts";
import { useEffect, useState } from "react";
import { type Client, describeError } from "../api";

export interface EventStream {
  events: SessionEvent[];
  error: string | null;
}

/**
 * The session's events from the first on, live over SSE. The SDK's stream reconnects by itself with
 * `Last-Event-ID` set to the last seq it delivered, so a dropped connection loses and repeats nothing.
 */
export function useEventStream(client: Client, sessionId: string): EventStream {
  const [stream, setStream] = useState<EventStream>({ events: [], error: null });
  useEffect(() => {
    const stop = new AbortController();
    const events: SessionEvent[] = [];
    // Events that arrive together (a long history on open) become one render, not one each.
    let flush: ReturnType<typeof setTimeout> | undefined;
    setStream({ events: [], error: null });
    (async () => {
      for await (const event of client.events.stream(sessionId, { signal: stop.signal })) {
        events.push(event);
        flush ??= setTimeout(() => {
          flush = undefined;
          setStream({ events: [...events], error: null });
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
