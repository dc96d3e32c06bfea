import { describe, expect, it } from "vitest";
import { firstMatch, isGroupSelector, isPatternSelector, selectorMatches } from "./selectors";

const shellRun = { name: "shell_run", group: "runtime" };

describe("selectorMatches", () => {
  it("matches exact names only", () => {
    expect(selectorMatches("shell_run", shellRun)).toBe(true);
    expect(selectorMatches("shell", shellRun)).toBe(false);
  });

  it("matches groups by the tool's group", () => {
    expect(selectorMatches("group:runtime", shellRun)).toBe(true);
    expect(selectorMatches("group:fs", shellRun)).toBe(false);
  });

  it("matches * patterns against the whole name", () => {
    expect(selectorMatches("shell_*", shellRun)).toBe(true);
    expect(selectorMatches("*_run", shellRun)).toBe(true);
    expect(selectorMatches("*", shellRun)).toBe(true);
    expect(selectorMatches("shell_*_x", shellRun)).toBe(false);
    expect(selectorMatches("hell_*", shellRun)).toBe(false);
  });

  it("classifies selectors and finds the first match", () => {
    expect(isGroupSelector("group:fs")).toBe(true);
    expect(isPatternSelector("shell_*")).toBe(true);
    expect(isPatternSelector("read")).toBe(false);
    expect(firstMatch(["read", "group:runtime", "shell_*"], shellRun)).toBe("group:runtime");
    expect(firstMatch(undefined, shellRun)).toBeUndefined();
  });
});
