import { EnvironmentConfig } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { execApproval } from "./exec-approval";

const environment = (overrides: Partial<EnvironmentConfig> = {}) =>
  EnvironmentConfig.parse({
    exec_security: "allowlist",
    exec_allowlist: ["echo", "git status"],
    ...overrides,
  });
const sandboxTool = (name: string) => ({ name, executor: "sandbox" as const });

describe("execApproval", () => {
  it("allows allowlisted commands and asks for the others under on-miss", () => {
    const config = environment({ exec_ask: "on-miss" });
    expect(execApproval(config, sandboxTool("shell_run"), { command: "echo hi" }).verdict).toBe("allow");
    const asked = execApproval(config, sandboxTool("shell_exec"), { command: "rm -rf /workspace/x" });
    const reason =
      "the command is not on the environment's exec allowlist; it needs approval (exec_ask=on-miss)";
    expect(asked).toEqual({
      verdict: "ask",
      reason,
      evaluation: { command: "rm -rf /workspace/x", env: {}, reason },
    });
  });

  it("denies a miss when the environment never asks, and everything under exec_security=deny", () => {
    expect(
      execApproval(environment({ exec_ask: "off" }), sandboxTool("bash"), { command: "cat /etc/passwd" }),
    ).toMatchObject({
      verdict: "deny",
      reason: "the command is not on the environment's exec allowlist and exec_ask=off, so it is denied",
    });
    expect(
      execApproval(environment({ exec_security: "deny" }), sandboxTool("shell_run"), { command: "echo hi" })
        .verdict,
    ).toBe("deny");
  });

  it("asks for every command under exec_ask=always, even a full-security one", () => {
    const config = environment({ exec_security: "full", exec_ask: "always" });
    expect(execApproval(config, sandboxTool("shell_run"), { command: "echo hi" }).verdict).toBe("ask");
    expect(
      execApproval(config, sandboxTool("sandbox_execute"), {
        action: "run_shell",
        args: { command: "echo hi" },
      }).verdict,
    ).toBe("ask");
  });

  it("asks before a variable that chooses code is set, and shows it to the approver", () => {
    const setRc = { name: "RIPGREP_CONFIG_PATH", value: "/workspace/.rgrc", shell_id: "main" };
    const asked = execApproval(environment({ exec_ask: "on-miss" }), sandboxTool("shell_set_env"), setRc);
    expect(asked.verdict).toBe("ask");
    expect(asked.evaluation).toMatchObject({
      command: null,
      env: { RIPGREP_CONFIG_PATH: "/workspace/.rgrc" },
    });
    expect(
      execApproval(environment({ exec_security: "deny" }), sandboxTool("shell_set_env"), setRc).verdict,
    ).toBe("deny");
    const withBashEnv = { command: "echo hi", env: { BASH_ENV: "/workspace/x.sh" } };
    expect(
      execApproval(environment({ exec_ask: "on-miss" }), sandboxTool("shell_run"), withBashEnv),
    ).toMatchObject({
      verdict: "ask",
      evaluation: { command: "echo hi", env: { BASH_ENV: "/workspace/x.sh" } },
    });
  });

  it("allows calls that run no command, whatever the policy", () => {
    const config = environment({ exec_security: "deny" });
    expect(execApproval(config, sandboxTool("write"), { path: "a", content: "x" }).verdict).toBe("allow");
    expect(
      execApproval(config, sandboxTool("sandbox_execute"), { action: "read_text", args: { path: "a" } })
        .verdict,
    ).toBe("allow");
    // A non-sandbox tool with a `command` field is not the sandbox's business.
    expect(execApproval(config, { name: "shell_run", executor: "inline" }, { command: "x" }).verdict).toBe(
      "allow",
    );
  });

  it("allows everything for a session without an environment (no sandbox tools are offered then)", () => {
    expect(execApproval(null, sandboxTool("shell_run"), { command: "rm -rf /" }).verdict).toBe("allow");
  });
});
