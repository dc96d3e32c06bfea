import { ID_PREFIX } from "@wakeloop/contracts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newId } from "./ids";

describe("newId", () => {
  it("prefixes by kind and sorts in creation order, even within one millisecond", () => {
    const ids = Array.from({ length: 1_000 }, () => newId("event"));
    expect(ids.every((id) => /^sevt_[0-9a-hjkmnp-tv-z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(newId("session").startsWith(`${ID_PREFIX.session}_`)).toBe(true);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("draws fresh randomness for every new millisecond, past many refills of its pool", () => {
    // Later than any id made so far, or the generator would only count up from the last one.
    vi.useFakeTimers({ now: Date.UTC(2100, 0, 1), toFake: ["Date"] });
    const randomParts = Array.from({ length: 2_000 }, () => {
      vi.advanceTimersByTime(1);
      return newId("event").slice(-16);
    });
    expect(new Set(randomParts).size).toBe(randomParts.length);
    // Every character of the alphabet turns up in every position: no stuck or repeating bytes.
    for (let position = 0; position < 16; position++)
      expect(new Set(randomParts.map((part) => part[position])).size).toBe(32);
  });
});
