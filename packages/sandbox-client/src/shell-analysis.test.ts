import { describe, expect, it } from "vitest";
import { analyzeCommand } from "./shell-analysis";

describe("loading the parser", () => {
  // First in this file: the parser loads on the first analysis.
  it("leaves the process's stack trace limit and globals as they were", () => {
    const limit = Error.stackTraceLimit;
    const hadRequire = Object.hasOwn(globalThis, "require");
    expect(analyzeCommand("true").ok).toBe(true);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(Object.hasOwn(globalThis, "require")).toBe(hadRequire);
  });
});

describe("analyzeCommand", () => {
  it("reads simple commands joined by lists and pipes, with quotes removed", () => {
    expect(analyzeCommand(`git status -s && echo "a b" | wc -l; ls 'x y' $HOME &`)).toEqual({
      ok: true,
      commands: [
        { program: "git", args: ["status", "-s"] },
        { program: "echo", args: ["a b"] },
        { program: "wc", args: ["-l"] },
        { program: "ls", args: ["x y", null] },
      ],
      operators: 3,
    });
  });

  it("fails, naming the construct, on anything but simple commands", () => {
    expect(analyzeCommand("ls $(whoami)")).toEqual({ ok: false, reason: "command substitution" });
    expect(analyzeCommand("(rm -rf /)")).toEqual({ ok: false, reason: "subshell" });
    expect(analyzeCommand("A=1 ls")).toEqual({ ok: false, reason: "variable assignment" });
    expect(analyzeCommand("ls > x")).toEqual({ ok: false, reason: "redirection" });
    expect(analyzeCommand("echo 'open")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^cannot be parsed/),
    });
  });
});
