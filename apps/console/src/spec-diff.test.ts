import { describe, expect, it } from "vitest";
import { specText } from "./spec-diff";

describe("spec text for diffs", () => {
  it("orders keys at every depth, so two versions differ only where their values do", () => {
    const one = specText({ b: 1, a: { d: [{ y: 1, x: 2 }], c: null } });
    const other = specText({ a: { c: null, d: [{ x: 2, y: 1 }] }, b: 1 });
    expect(one).toBe(other);
    expect(one.split("\n").slice(0, 3)).toEqual(["{", '  "a": {', '    "c": null,']);
  });

  it("keeps array order, which is meaningful (tools, rules)", () => {
    expect(specText(["b", "a"])).not.toBe(specText(["a", "b"]));
  });
});
