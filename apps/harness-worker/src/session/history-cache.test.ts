import type { SessionEvent } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { History } from "../context/assemble-context";
import { HistoryCache } from "./history-cache";
import { startingHistory } from "./load-session";

const history = (count: number): SessionEvent[] =>
  Array.from({ length: count }, (_, index) => ({
    id: `e${index + 1}`,
    session_id: "s",
    seq: index + 1,
    processed_at: null,
    created_at: "2026-11-23T00:00:00.000Z",
    wake_id: null,
    trace_id: null,
    type: "agent.thinking",
  }));

describe("HistoryCache", () => {
  it("gives back a copy of a kept history as the prefix of a longer session", () => {
    const cache = new HistoryCache(100);
    const kept = history(3);
    cache.keep("a", kept);
    const taken = cache.take("a", 5).events;
    expect(taken).toEqual(kept);
    taken.push(...history(4).slice(3));
    expect(kept).toHaveLength(3);
    // Taken means handed to a wake, which keeps what it ends with.
    expect(cache.take("a", 5).events).toEqual([]);
  });

  it("never gives a history longer than the session's, or one with a gap", () => {
    const cache = new HistoryCache(100);
    cache.keep("a", history(4));
    expect(cache.take("a", 3).events).toEqual([]);
    cache.keep("b", history(4).slice(1));
    expect(cache.take("b", 10).events).toEqual([]);
  });

  it("holds at most its events, dropping the least recently kept session first", () => {
    const cache = new HistoryCache(5);
    cache.keep("a", history(2));
    cache.keep("b", history(2));
    cache.keep("c", history(2));
    expect(cache.take("a", 10).events).toEqual([]);
    expect(cache.take("b", 10).events).toHaveLength(2);
    expect(cache.take("c", 10).events).toHaveLength(2);
    cache.keep("big", history(6));
    expect(cache.take("big", 10).events).toEqual([]);
  });

  it("says how much it holds, so a wake's start reads the page after it, joined only to that prefix", () => {
    const cache = new HistoryCache(100);
    expect(cache.heldOf("a")).toBe(0);
    cache.keep("a", history(3));
    const knownSeq = cache.heldOf("a");
    expect(knownSeq).toBe(3);
    const page = history(5).slice(3);
    expect(startingHistory(cache.take("a", 5).events, knownSeq, page)).toEqual(history(5));
    // The session turned out shorter than the cache (not this session's any more): both are dropped.
    cache.keep("b", history(4));
    const heldB = cache.heldOf("b");
    expect(startingHistory(cache.take("b", 2).events, heldB, history(6).slice(4))).toEqual([]);
  });

  it("hands the conversation built from a kept history to the next wake, and drops it with a stale one", () => {
    const cache = new HistoryCache(100);
    const conversation = new History();
    cache.keep("a", history(3), conversation);
    expect(cache.take("a", 5).conversation).toBe(conversation);
    cache.keep("b", history(4), conversation);
    expect(cache.take("b", 3)).toEqual({ events: [], conversation: null });
    cache.keep("c", history(2));
    expect(cache.take("c", 2).conversation).toBeNull();
  });
});
