import { describe, expect, it } from "vitest";
import { leadingKeyword, translatePlaceholders } from "./sql-placeholders";

describe("translatePlaceholders", () => {
  it("numbers each ? outside literals, identifiers, dollar quotes and comments", () => {
    const text = `SELECT ?, '?', "a?", E'\\'?', $$?$$, $t$ ? $t$ -- ?
      /* ? /* ? */ ? */ FROM t WHERE a = ? AND b = 'it''s?'`;
    expect(translatePlaceholders(text, 2)).toBe(
      `SELECT $1, '?', "a?", E'\\'?', $$?$$, $t$ ? $t$ -- ?
      /* ? /* ? */ ? */ FROM t WHERE a = $2 AND b = 'it''s?'`,
    );
  });

  it("refuses a param count that does not match the placeholders", () => {
    expect(() => translatePlaceholders("SELECT ?, ?", 1)).toThrow(/2 \? placeholder\(s\) but 1 param/);
    expect(() => translatePlaceholders("SELECT 1", 1)).toThrow(/0 \? placeholder/);
  });
});

describe("leadingKeyword", () => {
  it("skips blanks, comments and parentheses", () => {
    expect(leadingKeyword("  -- note\n /* x */ (SELECT 1)")).toBe("select");
    expect(leadingKeyword("CoMmIt")).toBe("commit");
    expect(leadingKeyword("")).toBe("");
  });
});
