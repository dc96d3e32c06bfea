import { describe, expect, it } from "vitest";
import { commandOf } from "./command-of";

describe("commandOf", () => {
  it("reads the command of the shell tools", () => {
    expect(commandOf("shell_run", { command: "ls -la" })).toBe("ls -la");
    expect(commandOf("shell_exec", { command: "make", shell_id: "main" })).toBe("make");
    expect(commandOf("bash", { command: "cat a.txt" })).toBe("cat a.txt");
  });

  it("reads sandbox_execute's command actions only", () => {
    expect(commandOf("sandbox_execute", { action: "run_shell", args: { command: "rm -rf x" } })).toBe(
      "rm -rf x",
    );
    expect(commandOf("sandbox_execute", { action: "read_text", args: { path: "a.txt" } })).toBeNull();
    expect(commandOf("sandbox_execute", { action: "run_command" })).toBeNull();
  });

  it("gives null for tools that run no command and for malformed input", () => {
    expect(commandOf("write", { path: "a.txt", content: "x" })).toBeNull();
    expect(commandOf("shell_run", { command: 42 })).toBeNull();
    expect(commandOf("shell_run", null)).toBeNull();
  });
});
