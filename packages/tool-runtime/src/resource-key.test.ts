import type { ToolDefinition } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { managedTools } from "./builtins";
import { keysConflict, resolveResourceKey } from "./resource-key";

const byName = (name: string): ToolDefinition => {
  const tool = managedTools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(name);
  return tool;
};

describe("resolveResourceKey", () => {
  it("fills placeholders from the input", () => {
    expect(resolveResourceKey(byName("write"), { path: "src/a.ts", content: "" })).toBe("fs:src/a.ts");
    expect(resolveResourceKey(byName("set_state"), { key: "plan", value: 1 })).toBe("state:plan");
  });

  it("falls back to the schema default", () => {
    expect(resolveResourceKey(byName("shell_exec"), { command: "ls" })).toBe("shell:main");
    expect(resolveResourceKey(byName("shell_exec"), { command: "ls", shell_id: "build" })).toBe(
      "shell:build",
    );
  });

  it("widens to the enclosing scope when a placeholder cannot be resolved", () => {
    expect(resolveResourceKey(byName("write"), { content: "" })).toBe("fs");
  });

  it("is null for tools without a key and keeps fixed keys", () => {
    expect(resolveResourceKey(byName("read"), { path: "a" })).toBeNull();
    expect(resolveResourceKey(byName("apply_patch"), { patch: "x" })).toBe("fs");
  });

  it("writes non-string values as JSON", () => {
    const tool = { ...byName("write"), parallelism: { parallelSafe: false, resourceKey: "n:{n}" } };
    expect(resolveResourceKey(tool, { n: 3 })).toBe("n:3");
  });
});

describe("keysConflict", () => {
  it("is true for equal keys and for a scope and its members", () => {
    expect(keysConflict("fs:a", "fs:a")).toBe(true);
    expect(keysConflict("fs", "fs:a")).toBe(true);
    expect(keysConflict("shell:main", "shell")).toBe(true);
  });

  it("is false for siblings and look-alike prefixes", () => {
    expect(keysConflict("fs:a", "fs:b")).toBe(false);
    expect(keysConflict("fs:a", "fs:ab")).toBe(false);
    expect(keysConflict("state", "stateful")).toBe(false);
  });
});
