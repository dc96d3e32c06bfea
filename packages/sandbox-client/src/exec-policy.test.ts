import { describe, expect, it } from "vitest";
import { allowlistEntryProblems, allowlistSatisfied } from "./allowlist";
import { checkExec, type ExecPolicyConfig, evaluateExecPolicy } from "./exec-policy";

const config = (overrides: Partial<ExecPolicyConfig>): ExecPolicyConfig => ({
  exec_security: "allowlist",
  exec_ask: "on-miss",
  exec_allowlist: ["ls", "git status", "npm run *", "/usr/bin/*"],
  ...overrides,
});

describe("allowlistSatisfied", () => {
  it("needs every simple command on the list", () => {
    const list = config({}).exec_allowlist;
    expect(allowlistSatisfied(list, "ls -la")).toBe(true);
    expect(allowlistSatisfied(list, "git status")).toBe(true);
    expect(allowlistSatisfied(list, "'git' \"status\" -s")).toBe(true);
    expect(allowlistSatisfied(list, "git push")).toBe(false);
    expect(allowlistSatisfied(list, "npm run build")).toBe(true);
    expect(allowlistSatisfied(list, "npm run $TARGET")).toBe(false);
    expect(allowlistSatisfied(list, "/usr/bin/env true")).toBe(true);
    expect(allowlistSatisfied(list, "ls && git status | ls; ls &")).toBe(true);
    expect(allowlistSatisfied(list, "ls && rm -rf x")).toBe(false);
    expect(allowlistSatisfied(list, "ls | sh")).toBe(false);
    expect(allowlistSatisfied(list, 'ls $HOME "$PWD" *.txt')).toBe(true);
  });

  it("matches a bare entry to the bare name and to the sandbox's PATH directories only", () => {
    expect(allowlistSatisfied(["git"], "git log")).toBe(true);
    expect(allowlistSatisfied(["git"], "/usr/bin/git log")).toBe(true);
    expect(allowlistSatisfied(["git"], "/usr/local/bin/git log")).toBe(true);
    expect(allowlistSatisfied(["git"], "//usr/./bin/git log")).toBe(true);
    expect(allowlistSatisfied(["git"], "/workspace/git log")).toBe(false);
    expect(allowlistSatisfied(["git"], "/tmp/bin/git")).toBe(false);
  });

  it("matches an absolute entry to that canonical path only", () => {
    expect(allowlistSatisfied(["/usr/bin/git"], "/usr/bin/git status")).toBe(true);
    expect(allowlistSatisfied(["/usr/bin/git"], "/usr//bin/./git status")).toBe(true);
    expect(allowlistSatisfied(["/usr/bin/git"], "git status")).toBe(false);
    expect(allowlistSatisfied(["/usr/bin/git"], "/usr/local/bin/git")).toBe(false);
    expect(allowlistSatisfied(["/usr/bin/*"], "/usr/bin/x/y")).toBe(false);
    expect(allowlistSatisfied(["/usr/bin/../bin/git"], "/usr/bin/git")).toBe(false);
  });
});

describe("allowlistEntryProblems", () => {
  it("names every entry that could never match and accepts the rest", () => {
    expect(allowlistEntryProblems(["git", "git status", "/usr/bin/git", "/usr/bin/*", "npm run *"])).toEqual(
      [],
    );
    const problems = allowlistEntryProblems(["./git", "bin/git log", "/usr/../bin/sh", ""]);
    expect(problems).toHaveLength(4);
    expect(problems[0]).toContain("relative program path (./git)");
    expect(problems[1]).toContain("relative program path (bin/git)");
    expect(problems[2]).toContain("..");
    expect(problems[3]).toContain("empty entry");
  });
});

describe("exec policy against shell syntax", () => {
  // Each of these runs something other than what the allowlist names, or touches files first.
  const bypasses = [
    "> git rm -rf /",
    "git status > /workspace/.bashrc",
    "git status 2>&1",
    "git status < /etc/passwd",
    "git status <<EOF\nx\nEOF",
    "git status <<< x",
    "PAGER='sh -c id' git status",
    "GIT_DIR=/tmp git status",
    "X=1",
    "./git status",
    "bin/git status",
    "../git status",
    "/usr/bin/../../tmp/git status",
    "/workspace/git status",
    "git status $(rm -rf /)",
    'git status "$(rm -rf /)"',
    "git status `rm -rf /`",
    "git status <(rm -rf /)",
    "git status >(rm -rf /)",
    "(git status)",
    "{ git status; }",
    "git() { rm -rf /; }; git status",
    "function git { rm -rf /; }",
    "((x = 1)); git status",
    "git status $((a[$(id)]))",
    `git status \${x@P}`,
    `git status \${!ref}`,
    `git status \${x:-$(id)}`,
    `git status \${x:$n}`,
    "g*t status",
    "gi? status",
    "[g]it status",
    "{git,status}",
    "{rm,-rf,/}",
    "~/git status",
    "g\\it status",
    "$'\\x67it' status",
    '$"git" status',
    "$GIT status",
    "export PATH=/workspace",
    "declare -x BASH_ENV=/workspace/x",
    "coproc git status",
    "time git status",
    "[[ -f x ]] && git status",
    "if true; then git status; fi",
    "for x in 1; do git status; done",
    "case x in x) git status;; esac",
    "let x=1",
    "eval git status",
    "git status; rm -rf /",
    "git status && rm -rf /",
    "git status || rm -rf /",
    "git status | sh",
    "git status |& sh",
    "git status & rm -rf /",
    "git status\nrm -rf /",
    "git status 'unterminated",
    "git status )",
    "",
  ];

  it.each(bypasses)("%j is never allowed under allowlist [git status]", (command) => {
    const list = { exec_allowlist: ["git status"] };
    expect(evaluateExecPolicy(config({ ...list, exec_ask: "on-miss" }), command)).toBe("ask");
    expect(evaluateExecPolicy(config({ ...list, exec_ask: "off" }), command)).toBe("deny");
    expect(evaluateExecPolicy(config({ exec_security: "deny" }), command)).toBe("deny");
  });

  it("says why a command cannot be checked", () => {
    const check = checkExec(config({ exec_allowlist: ["git"] }), "shell_run", { command: "> git rm -rf /" });
    expect(check).toMatchObject({
      verdict: "ask",
      command: "> git rm -rf /",
      reason: "the command cannot be checked (redirection); it needs approval (exec_ask=on-miss)",
    });
    expect(checkExec(config({ exec_allowlist: ["git"] }), "shell_run", { command: "./git" })?.reason).toBe(
      "the command cannot be checked (relative program path (./git)); it needs approval (exec_ask=on-miss)",
    );
  });
});

describe("exec policy for variables", () => {
  it("treats setting a variable that chooses code like a command off the allowlist", () => {
    const setRc = { name: "RIPGREP_CONFIG_PATH", value: "/workspace/rc", shell_id: "main" };
    expect(checkExec(config({}), "shell_set_env", setRc)).toEqual({
      command: null,
      env: { RIPGREP_CONFIG_PATH: "/workspace/rc" },
      sensitive: ["RIPGREP_CONFIG_PATH"],
      verdict: "ask",
      reason:
        "it sets RIPGREP_CONFIG_PATH, which choose the code programs run; it needs approval (exec_ask=on-miss)",
    });
    expect(checkExec(config({ exec_ask: "off" }), "shell_set_env", setRc)?.verdict).toBe("deny");
    expect(checkExec(config({ exec_security: "deny" }), "shell_set_env", setRc)?.verdict).toBe("deny");
    expect(
      checkExec(config({ exec_security: "full", exec_ask: "off" }), "shell_set_env", setRc)?.verdict,
    ).toBe("allow");
    const bashEnv = { command: "ls", env: { BASH_ENV: "/workspace/x.sh" } };
    expect(checkExec(config({}), "shell_run", bashEnv)?.verdict).toBe("ask");
    expect(checkExec(config({}), "shell_run", { command: "ls", env: { GREETING: "hi" } })?.verdict).toBe(
      "allow",
    );
    expect(
      checkExec(config({}), "shell_set_env", { name: "GREETING", value: "hi", shell_id: "main" }),
    ).toBeNull();
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
