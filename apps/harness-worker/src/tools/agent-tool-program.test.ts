import { MAX_JSON_DEPTH } from "@wakeloop/contracts";
import { Parser } from "acorn";
import { describe, expect, it } from "vitest";
import { MAX_RESULT_CHARS, readToolRun, toolProgram } from "./agent-tool-program";

// The program is only built and parsed here; it runs in the sandbox (test/e2e/agent-tools.e2e.test.ts).

describe("toolProgram", () => {
  it("stages the tool and its libraries as files and embeds the input as JSON in a program that parses", () => {
    const built = toolProgram({
      marker: "sevt_1",
      code: "return require('math_utils').double(args.n);",
      libraries: [{ name: "math_utils", code: "exports.double = (n) => 2 * n;" }],
      args: { n: 21, text: 'quote " and </script>' },
    });
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(() => Parser.parse(built.program, { ecmaVersion: "latest", sourceType: "script" })).not.toThrow();
    expect(built.program).toContain('"node_modules/math_utils/index.js"');
    expect(built.program).toContain(JSON.stringify({ n: 21, text: 'quote " and </script>' }));
    expect(built.program).toContain("@@wakeloop-tool-result:sevt_1@@");
  });

  it("refuses a tool whose code, libraries and input do not fit one sandbox program, saying what to shrink", () => {
    const built = toolProgram({
      marker: "sevt_1",
      code: "return 1;",
      libraries: [],
      args: { blob: "x".repeat(40_000) },
    });
    expect(built).toEqual({
      ok: false,
      message: expect.stringMatching(/at most 32000\. Make the code, its libraries or the input smaller/),
    });
  });
});

describe("readToolRun", () => {
  const mark = "@@wakeloop-tool-result:sevt_1@@";

  it("reads the last marked line of this call, with the logs", () => {
    const output = `noise\n${mark}{"ok":true,"result":{"a":1},"logs":["hi"],"logs_truncated":false}\n[exit code 0]`;
    expect(readToolRun(output, "sevt_1")).toEqual({
      ok: true,
      result: { a: 1 },
      logs: ["hi"],
      logsTruncated: false,
    });
    expect(readToolRun(`${mark}{"ok":false,"error":"Error: boom","logs":[]}\n`, "sevt_1")).toEqual({
      ok: false,
      error: "Error: boom",
      logs: [],
    });
  });

  it("finds no result without this call's marker, with a cut or malformed line, or a line of the wrong shape", () => {
    expect(readToolRun("[timed out after 30000 ms]", "sevt_1")).toBeNull();
    expect(readToolRun('@@wakeloop-tool-result:sevt_2@@{"ok":true}', "sevt_1")).toBeNull();
    expect(readToolRun(`${mark}{"ok":tr`, "sevt_1")).toBeNull();
    expect(readToolRun(`${mark}{"ok":"yes"}`, "sevt_1")).toBeNull();
    expect(MAX_RESULT_CHARS).toBeLessThan(100_000);
  });

  it("fails a result nested past MAX_JSON_DEPTH, which nothing could walk or store", () => {
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    expect(readToolRun(`${mark}{"ok":true,"result":${deep},"logs":[]}\n`, "sevt_1")).toEqual({
      ok: false,
      error: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH} levels`),
      logs: [],
    });
  });
});
