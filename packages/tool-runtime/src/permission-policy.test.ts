import type { AgentTool } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { managedTools } from "./builtins";
import { computeEffectiveTools } from "./effective-tools";
import { evaluatePermission, resolvePermission } from "./permission-policy";
import { customToolDefinition } from "./registry";
import { policyContext, sandboxReady } from "./test-context";

const tool = (name: string) => {
  const found = managedTools.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe("resolvePermission", () => {
  it("uses the tool default when nothing is configured", () => {
    expect(resolvePermission(tool("shell_run"), [])).toEqual({
      policy: "always_ask",
      source: "tool_default",
    });
    expect(resolvePermission(tool("read"), [])).toEqual({ policy: "always_allow", source: "tool_default" });
  });

  it("toolset default beats the tool default; a per-tool config beats both", () => {
    const toolset: AgentTool[] = [
      {
        type: "builtin",
        default_permission_policy: "always_ask",
        configs: [{ name: "shell_run", permission_policy: "always_allow" }],
      },
    ];
    expect(resolvePermission(tool("read"), toolset)).toEqual({
      policy: "always_ask",
      source: "toolset_default",
    });
    expect(resolvePermission(tool("shell_run"), toolset)).toEqual({
      policy: "always_allow",
      source: "agent_config",
    });
  });

  it("leaves custom tools at their own policy", () => {
    const custom = customToolDefinition({
      type: "custom",
      name: "x",
      description: "x",
      input_schema: { type: "object" },
    });
    const toolset: AgentTool[] = [{ type: "builtin", default_permission_policy: "always_ask", configs: [] }];
    expect(resolvePermission(custom, toolset)).toEqual({ policy: "always_allow", source: "tool_default" });
  });
});

describe("evaluatePermission", () => {
  it("is allow, ask, or deny for tools outside the effective set", () => {
    const effective = computeEffectiveTools(policyContext({ agentPolicy: { deny: ["bash"] } }), sandboxReady);
    expect(evaluatePermission("read", effective)).toBe("allow");
    expect(evaluatePermission("shell_run", effective)).toBe("ask");
    expect(evaluatePermission("bash", effective)).toBe("deny");
    expect(evaluatePermission("nope", effective)).toBe("deny");
  });
});
