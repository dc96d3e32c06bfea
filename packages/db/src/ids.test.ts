import { ID_PREFIX } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { newId } from "./ids";

describe("newId", () => {
  it("prefixes by kind and sorts in creation order, even within one millisecond", () => {
    const ids = Array.from({ length: 1_000 }, () => newId("event"));
    expect(ids.every((id) => /^sevt_[0-9a-hjkmnp-tv-z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(newId("session").startsWith(`${ID_PREFIX.session}_`)).toBe(true);
  });
});
