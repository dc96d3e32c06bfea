import { describe, expect, it } from "vitest";
import { exceedsJsonDepth, jsonDepthMessage, MAX_JSON_DEPTH } from "./json-depth";

/** `levels` arrays, each holding the next, as JSON.parse reads them from a body. */
const nested = (levels: number): unknown => JSON.parse("[".repeat(levels) + "]".repeat(levels));

describe("JSON depth", () => {
  it("counts a bare array or object as one level, and scalars as none", () => {
    expect(exceedsJsonDepth("text", 0)).toBe(false);
    expect(exceedsJsonDepth([], 0)).toBe(true);
    expect(exceedsJsonDepth({ a: [1, { b: "x" }] }, 3)).toBe(false);
    expect(exceedsJsonDepth({ a: [1, { b: {} }] }, 3)).toBe(true);
  });

  it("allows exactly the limit and refuses one level more, in arrays and objects alike", () => {
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    const objects = JSON.parse(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${"}".repeat(MAX_JSON_DEPTH + 1)}`);
    expect(exceedsJsonDepth(objects)).toBe(true);
  });

  it("finds a deep branch after wide shallow ones", () => {
    expect(exceedsJsonDepth({ wide: Array.from({ length: 10_000 }, () => ({})), deep: nested(200) })).toBe(
      true,
    );
  });

  it("checks a value nested far past any stack without throwing", () => {
    expect(exceedsJsonDepth(nested(200_000))).toBe(true);
  });

  it("names the limit in its message", () => {
    expect(jsonDepthMessage("the body")).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });
});
