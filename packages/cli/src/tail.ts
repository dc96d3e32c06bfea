import type { WakeloopClient } from "@wakeloop/sdk";
import { tailLine } from "./format";
import { type Io, noteReconnect, writeLine } from "./terminal";

export interface TailOptions {
  /** Start after this seq (0: from the first event). */
  after: number;
  /** Stop once the session is idle (or terminated) after the events it had when tail started. */
  untilIdle: boolean;
  json: boolean;
}

/**
 * Prints a session's events as they are committed, until Ctrl-C (or the session is idle, with
 * `untilIdle`). A dropped connection is resumed after the last event printed, so none is missed or
 * printed twice; each reconnect is noted on stderr.
 */
export async function runTail(client: WakeloopClient, sessionId: string, options: TailOptions, io: Io) {
  // Ask for the session first: an unknown id is a clear 404, not a stream that never opens.
  const session = await client.sessions.get(sessionId);
  const stop = new AbortController();
  const events = client.events.stream(sessionId, {
    afterSeq: options.after,
    signal: stop.signal,
    onReconnect: noteReconnect(io),
  });
  for await (const event of events) {
    writeLine(io.stdout, options.json ? JSON.stringify(event) : tailLine(event));
    const caughtUp = event.seq >= session.last_seq;
    const ended =
      event.type === "session.status_terminated" ||
      (options.untilIdle && caughtUp && event.type === "session.status_idle");
    if (ended) {
      stop.abort();
      return;
    }
  }
}
