import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stableHash, stableStringify } from "./stable-json";

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, seed));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  const rotated = entries
    .slice(seed % (entries.length || 1))
    .concat(entries.slice(0, seed % (entries.length || 1)));
  return Object.fromEntries(rotated.reverse().map(([key, item]) => [key, shuffleKeys(item, seed + 1)]));
}

describe("stableStringify", () => {
  it("sorts keys at every depth", () => {
    expect(stableStringify({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it("gives the same text and hash whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(20), (value, seed) => {
        const shuffled = shuffleKeys(value, seed);
        expect(stableStringify(shuffled)).toBe(stableStringify(value));
        expect(stableHash(shuffled)).toBe(stableHash(value));
      }),
    );
  });

  it("tells different values apart", () => {
    expect(stableHash({ a: 1 })).not.toBe(stableHash({ a: 2 }));
    expect(stableHash([1, 2])).not.toBe(stableHash([2, 1]));
  });
});
