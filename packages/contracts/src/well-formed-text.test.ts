import { describe, expect, it } from "vitest";
import { findIllFormedText, isWellFormedText, toWellFormedText } from "./well-formed-text";

describe("well-formed text", () => {
  it("accepts ordinary text, including surrogate pairs", () => {
    expect(isWellFormedText("plain ascii, ünïcode and an emoji 😀")).toBe(true);
  });

  it.each([
    ["a NUL", "a\u0000b"],
    ["a lone high surrogate", "a\uD800b"],
    ["a lone low surrogate", "a\uDC00b"],
    ["a high surrogate at the end", "ab\uD83D"],
  ])("refuses %s", (_, text) => {
    expect(isWellFormedText(text)).toBe(false);
  });

  it("replaces bad characters in strings and keys at any depth, leaving the rest as it was", () => {
    const date = new Date(0);
    const value = { "k\u0000": ["x\uD800", 1, null, { deep: "ok 😀\u0000" }], when: date, flag: true };
    expect(toWellFormedText(value)).toEqual({
      "k\uFFFD": ["x\uFFFD", 1, null, { deep: "ok 😀\uFFFD" }],
      when: date,
      flag: true,
    });
    expect(value["k\u0000"][0]).toBe("x\uD800");
  });

  it("copies only what holds a replacement", () => {
    const fine = { list: [{ text: "ok" }], nested: { n: 1 } };
    expect(toWellFormedText(fine)).toBe(fine);
    const mixed = { fine: fine.nested, bad: ["ok", "a\u0000"] };
    const repaired = toWellFormedText(mixed);
    expect(repaired).toEqual({ fine: { n: 1 }, bad: ["ok", "a\uFFFD"] });
    expect(repaired).not.toBe(mixed);
    expect(repaired.fine).toBe(fine.nested);
    expect(mixed.bad[1]).toBe("a\u0000");
  });

  it("names the path of the first bad string or key", () => {
    expect(findIllFormedText({ events: [{ content: [{ text: "ok" }, { text: "a\u0000" }] }] })).toEqual([
      "events",
      0,
      "content",
      1,
      "text",
    ]);
    expect(findIllFormedText({ ok: { "bad\uDFFF": 1 } })).toEqual(["ok", "bad\uDFFF"]);
    expect(findIllFormedText({ fine: ["text", 3, { nested: "😀" }] })).toBeNull();
  });
});

describe("finding bad text in deep values", () => {
  it("walks a value nested far past any stack without throwing", () => {
    const levels = 200_000;
    const deep = JSON.parse(`${'{"a":'.repeat(levels)}"x\\u0000"${"}".repeat(levels)}`);
    expect(findIllFormedText(deep)).toHaveLength(levels);
    expect(findIllFormedText(JSON.parse("[".repeat(levels) + "]".repeat(levels)))).toBeNull();
  });
});
