import { describe, expect, it } from "vitest";
import { createVectorCache } from "./vector-cache";

describe("vector cache", () => {
  it("answers only for the stamp it holds, and evicts the least recently used past its budget", () => {
    const cache = createVectorCache(3 * 16);
    const vector = (value: number) => Float32Array.of(value, value, value, value);
    cache.set("a", "1", vector(1));
    cache.set("b", "1", vector(2));
    cache.set("c", "1", vector(3));
    expect(cache.get("a", "1")).toEqual(vector(1));
    // Embedded again since: the held bytes are stale, and dropped.
    expect(cache.get("b", "2")).toBeUndefined();
    expect(cache.get("b", "1")).toBeUndefined();
    // Two more vectors: the second evicts the least recently used, c (a was read after it was set).
    cache.set("d", "1", vector(4));
    cache.set("e", "1", vector(5));
    expect(cache.get("c", "1")).toBeUndefined();
    expect([cache.get("a", "1"), cache.get("d", "1"), cache.get("e", "1")]).toEqual([
      vector(1),
      vector(4),
      vector(5),
    ]);
  });

  it("holds nothing with a budget of 0", () => {
    const cache = createVectorCache(0);
    cache.set("a", "1", Float32Array.of(1));
    expect(cache.get("a", "1")).toBeUndefined();
  });
});
