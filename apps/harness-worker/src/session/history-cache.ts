import type { SessionEvent } from "@wakeloop/contracts";

/**
 * The histories of sessions this worker ran lately, so the next wake of one reads and parses only the
 * events committed since (a long session's history is otherwise the largest part of a wake's start).
 * Committed events never change, except `processed_at` on user messages, which the harness never
 * reads from the history (the projection's `unprocessed_message_ids` is read fresh with the lease).
 * Bounded by the events it holds; the least recently used session goes first.
 */
export class HistoryCache {
  private readonly sessions = new Map<string, readonly SessionEvent[]>();
  private held = 0;

  constructor(private readonly maxEvents: number) {}

  /** How many of the session's first events are held (0: none). */
  heldOf(sessionId: string): number {
    return this.sessions.get(sessionId)?.length ?? 0;
  }

  /** A copy of what is known of the session's first `lastSeq` events (a prefix, possibly empty). */
  take(sessionId: string, lastSeq: number): SessionEvent[] {
    const events = this.sessions.get(sessionId);
    if (events === undefined) return [];
    this.drop(sessionId);
    // A history longer than the session's is not this session's any more: start over.
    if (events.length > lastSeq || events.at(-1)?.seq !== events.length) return [];
    return [...events];
  }

  /** Keeps the history a wake ended with. */
  keep(sessionId: string, events: readonly SessionEvent[]): void {
    this.drop(sessionId);
    if (events.length > this.maxEvents) return;
    this.sessions.set(sessionId, events);
    this.held += events.length;
    for (const [oldest, evicted] of this.sessions) {
      if (this.held <= this.maxEvents) break;
      this.sessions.delete(oldest);
      this.held -= evicted.length;
    }
  }

  private drop(sessionId: string): void {
    const events = this.sessions.get(sessionId);
    if (events === undefined) return;
    this.sessions.delete(sessionId);
    this.held -= events.length;
  }
}
