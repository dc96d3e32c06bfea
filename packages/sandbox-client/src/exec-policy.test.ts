import { describe, expect, it } from "vitest";
import { allowlistSatisfied, analyzeCommand, type ExecPolicyConfig, evaluateExecPolicy } from "./exec-policy";

const config = (overrides: Partial<ExecPolicyConfig>): ExecPolicyConfig => ({
  exec_security: "allowlist",
  exec_ask: "on-miss",
  exec_allowlist: ["ls", "git status", "npm run *", "/usr/bin/*"],
  ...overrides,
});

describe("analyzeCommand", () => {
  it("splits simple commands on separators and removes quotes", () => {
    const analysis = analyzeCommand(`FOO=1 git status -s && echo "a b" | wc -l; ls 'x y' 2>&1`);
    expect(analysis).toEqual({
      ok: true,
      segments: [
        ["FOO=1", "git", "status", "-s"],
        ["echo", "a b"],
        ["wc", "-l"],
        ["ls", "x y", "2>&1"],
      ],
      operators: 3,
    });
  });

  it("fails on substitutions and subshells", () => {
    expect(analyzeCommand("ls $(whoami)").ok).toBe(false);
    expect(analyzeCommand('echo "`id`"').ok).toBe(false);
    expect(analyzeCommand("(rm -rf /)").ok).toBe(false);
    expect(analyzeCommand("cat <(ls)").ok).toBe(false);
    expect(analyzeCommand("echo 'open").ok).toBe(false);
  });
});

describe("allowlistSatisfied", () => {
  it("needs every simple command on the list", () => {
    const list = config({}).exec_allowlist;
    expect(allowlistSatisfied(list, "ls -la")).toBe(true);
    expect(allowlistSatisfied(list, "git status")).toBe(true);
    expect(allowlistSatisfied(list, "git push")).toBe(false);
    expect(allowlistSatisfied(list, "npm run build")).toBe(true);
    expect(allowlistSatisfied(list, "/usr/bin/env true")).toBe(true);
    expect(allowlistSatisfied(list, "ls && rm -rf x")).toBe(false);
    expect(allowlistSatisfied(list, "ls | sh")).toBe(false);
    expect(allowlistSatisfied(list, "ls > out.txt 2>&1")).toBe(true);
  });
});

describe("evaluateExecPolicy", () => {
  it("follows security × ask", () => {
    const cases: Array<[ExecPolicyConfig["exec_security"], ExecPolicyConfig["exec_ask"], string, string]> = [
      ["deny", "off", "ls", "deny"],
      ["deny", "always", "ls", "deny"],
      ["full", "off", "rm -rf x", "allow"],
      ["full", "on-miss", "rm -rf x", "allow"],
      ["full", "always", "ls", "ask"],
      ["allowlist", "off", "ls", "allow"],
      ["allowlist", "off", "rm x", "deny"],
      ["allowlist", "on-miss", "ls", "allow"],
      ["allowlist", "on-miss", "rm x", "ask"],
      ["allowlist", "always", "ls", "ask"],
      ["allowlist", "always", "rm x", "ask"],
    ];
    for (const [security, ask, command, verdict] of cases) {
      expect(
        evaluateExecPolicy(config({ exec_security: security, exec_ask: ask }), command),
        `${security}/${ask}/${command}`,
      ).toBe(verdict);
    }
  });
});
