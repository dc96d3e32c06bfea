import type { SessionEvent } from "@wakeloop/contracts";
import type { History } from "../context/assemble-context";

/** What a wake takes over from the last wake of its session on this worker. */
export interface HeldHistory {
  /** The session's first events (a prefix, possibly empty), a copy the wake may extend. */
  events: SessionEvent[];
  /**
   * The model messages built from the first `seen` of those events, which the wake goes on from, so
   * a long history is not converted (nor encoded for the provider, which caches per message) again.
   */
  conversation: History | null;
}

/**
 * The histories of sessions this worker ran lately, so the next wake of one reads and parses only the
 * events committed since (a long session's history is otherwise the largest part of a wake's start).
 * Committed events never change, except `processed_at` on user messages, which the harness never
 * reads from the history (the projection's `unprocessed_message_ids` is read fresh with the lease).
 * Bounded by the events it holds; the least recently used session goes first.
 */
export class HistoryCache {
  private readonly sessions = new Map<
    string,
    { events: readonly SessionEvent[]; conversation: History | null }
  >();
  private held = 0;

  constructor(private readonly maxEvents: number) {}

  /** How many of the session's first events are held (0: none). */
  heldOf(sessionId: string): number {
    return this.sessions.get(sessionId)?.events.length ?? 0;
  }

  /** What is known of the session's first `lastSeq` events; taken, so no other wake gets the same. */
  take(sessionId: string, lastSeq: number): HeldHistory {
    const held = this.sessions.get(sessionId);
    if (held === undefined) return { events: [], conversation: null };
    this.drop(sessionId);
    const { events, conversation } = held;
    // A history longer than the session's is not this session's any more: start over.
    if (events.length > lastSeq || events.at(-1)?.seq !== events.length)
      return { events: [], conversation: null };
    return { events: [...events], conversation };
  }

  /** Keeps the history a wake ended with, and the conversation built from it, if any. */
  keep(sessionId: string, events: readonly SessionEvent[], conversation: History | null = null): void {
    this.drop(sessionId);
    if (events.length > this.maxEvents) return;
    this.sessions.set(sessionId, { events, conversation });
    this.held += events.length;
    for (const [oldest, evicted] of this.sessions) {
      if (this.held <= this.maxEvents) break;
      this.sessions.delete(oldest);
      this.held -= evicted.events.length;
    }
  }

  private drop(sessionId: string): void {
    const held = this.sessions.get(sessionId);
    if (held === undefined) return;
    this.sessions.delete(sessionId);
    this.held -= held.events.length;
  }
}
