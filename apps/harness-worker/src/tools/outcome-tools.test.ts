import { describe, expect, it } from "vitest";
import { matchCriteria } from "./outcome-tools";

const verdict = (criterion: string, met = true) => ({ criterion, met, evidence: "seen" });

describe("matchCriteria", () => {
  it("puts one verdict per criterion in the outcome's order", () => {
    expect(matchCriteria(["a", "b"], [verdict("b", false), verdict("a")])).toEqual([
      verdict("a"),
      verdict("b", false),
    ]);
  });

  it("names what is missing, unknown or graded twice", () => {
    expect(matchCriteria(["a", "b"], [verdict("a")])).toMatch(/missing: \["b"\]/);
    expect(matchCriteria(["a"], [verdict("a"), verdict("c")])).toMatch(/"c" is not a criterion/);
    expect(matchCriteria(["a"], [verdict("a"), verdict("a", false)])).toMatch(/"a" is graded twice/);
  });
});
