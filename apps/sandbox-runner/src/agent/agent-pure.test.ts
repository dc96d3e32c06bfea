import { describe, expect, it } from "vitest";
import { parseExports, shellQuote } from "./env-file";
import { globToRegExp } from "./glob";
import { OutputBuffer } from "./output-buffer";

// The agent's pure helpers: the same TypeScript the runner bundles into the container's program.

describe("globToRegExp", () => {
  it("matches ** across directories and * within one", () => {
    const ts = globToRegExp("src/**/*.ts");
    expect(ts.test("src/a.ts")).toBe(true);
    expect(ts.test("src/deep/er/b.ts")).toBe(true);
    expect(ts.test("src/a.tsx")).toBe(false);
    expect(ts.test("lib/a.ts")).toBe(false);
    expect(globToRegExp("*.md").test("docs/a.md")).toBe(false);
    expect(globToRegExp("**/*.md").test("docs/a.md")).toBe(true);
    expect(globToRegExp("**/*.md").test("a.md")).toBe(true);
  });

  it("supports ?, classes and alternations", () => {
    expect(globToRegExp("file?.{js,ts}").test("file1.ts")).toBe(true);
    expect(globToRegExp("file?.{js,ts}").test("file12.ts")).toBe(false);
    expect(globToRegExp("[!a]*").test("bcd")).toBe(true);
    expect(globToRegExp("[!a]*").test("abc")).toBe(false);
    expect(globToRegExp("a.b").test("axb")).toBe(false);
  });
});

describe("parseExports", () => {
  it("reads bash's export -p, including escapes and multi-line values", () => {
    const text = [
      'declare -x HOME="/home/sandbox"',
      'declare -x MULTI="line one',
      'line two"',
      'declare -x QUOTED="say \\"hi\\" for \\$5 and \\\\ and \\`x\\`"',
      "declare -x NOVALUE",
      'declare -rx RO="fixed"',
      "",
    ].join("\n");
    expect(parseExports(text)).toEqual({
      HOME: "/home/sandbox",
      MULTI: "line one\nline two",
      QUOTED: 'say "hi" for $5 and \\ and `x`',
      RO: "fixed",
    });
  });

  it("quotes any string for bash", () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });
});

describe("OutputBuffer", () => {
  it("keeps absolute offsets when it drops the oldest output", () => {
    const buffer = new OutputBuffer(10);
    buffer.append("0123456789");
    buffer.append("abcde");
    expect(buffer.total).toBe(15);
    expect(buffer.page(0, 4)).toEqual({ from: 5, text: "5678", total: 15, dropped: 5 });
    expect(buffer.tail(3)).toMatchObject({ from: 12, text: "cde" });
  });

  it("decodes UTF-8 characters split across chunks", () => {
    const buffer = new OutputBuffer();
    const bytes = Buffer.from("é", "utf8");
    buffer.push("stdout", bytes.subarray(0, 1));
    buffer.push("stdout", bytes.subarray(1));
    expect(buffer.page(0, 10).text).toBe("é");
  });
});
