import { describe, expect, it } from "vitest";
import { checkExec } from "./exec-policy";
import { execRequestOf } from "./exec-request";

describe("execRequestOf", () => {
  it("reads the command of the shell tools, with the variables shell_run sets", () => {
    expect(execRequestOf("shell_run", { command: "ls -la" })).toEqual({
      command: "ls -la",
      env: {},
      sensitive: [],
    });
    expect(execRequestOf("shell_exec", { command: "make", shell_id: "main" })?.command).toBe("make");
    expect(execRequestOf("bash", { command: "cat a.txt" })?.command).toBe("cat a.txt");
    expect(
      execRequestOf("shell_run", { command: "ls", env: { FOO: "1", BASH_ENV: "/workspace/x" } }),
    ).toEqual({
      command: "ls",
      env: { FOO: "1", BASH_ENV: "/workspace/x" },
      sensitive: ["BASH_ENV"],
    });
  });

  it("shows run_sandbox_code as the interpreter command it runs, which the exec policy judges", () => {
    expect(execRequestOf("run_sandbox_code", { code: "print('hi')", language: "python" })?.command).toBe(
      "python3 -c 'print('\\''hi'\\'')'",
    );
    expect(execRequestOf("run_sandbox_code", { code: "1+1" })?.command).toBe("node -e '1+1'");
    expect(execRequestOf("run_sandbox_code", { code: "" })).toBeNull();
    const policy = { exec_security: "allowlist" as const, exec_allowlist: ["python3 *"] };
    const python = { code: "print(1)", language: "python" };
    expect(checkExec({ ...policy, exec_ask: "off" }, "run_sandbox_code", python)?.verdict).toBe("allow");
    expect(checkExec({ ...policy, exec_ask: "off" }, "run_sandbox_code", { code: "1" })?.verdict).toBe(
      "deny",
    );
    expect(checkExec({ ...policy, exec_ask: "on-miss" }, "run_sandbox_code", { code: "1" })?.verdict).toBe(
      "ask",
    );
  });

  it("reads sandbox_execute's command actions only", () => {
    expect(
      execRequestOf("sandbox_execute", { action: "run_shell", args: { command: "rm -rf x" } })?.command,
    ).toBe("rm -rf x");
    expect(execRequestOf("sandbox_execute", { action: "read_text", args: { path: "a.txt" } })).toBeNull();
    expect(execRequestOf("sandbox_execute", { action: "run_command" })).toBeNull();
  });

  it("makes setting a variable that chooses code an exec request, and a harmless one none", () => {
    expect(
      execRequestOf("shell_set_env", {
        name: "RIPGREP_CONFIG_PATH",
        value: "/workspace/rc",
        shell_id: "main",
      }),
    ).toEqual({
      command: null,
      env: { RIPGREP_CONFIG_PATH: "/workspace/rc" },
      sensitive: ["RIPGREP_CONFIG_PATH"],
    });
    expect(execRequestOf("shell_set_env", { name: "GREETING", value: "hi", shell_id: "main" })).toBeNull();
  });

  it("gives null for tools that run no command and for malformed input", () => {
    expect(execRequestOf("write", { path: "a.txt", content: "x" })).toBeNull();
    expect(execRequestOf("shell_run", { command: 42 })).toBeNull();
    expect(execRequestOf("shell_run", null)).toBeNull();
  });
});
