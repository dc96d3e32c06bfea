import type { AgentTool, EvaluatedPermission, PermissionPolicy, ToolDefinition } from "@wakeloop/contracts";
import type { EffectiveToolSet, PermissionSource } from "./effective-tool-set";

export interface ResolvedPermission {
  policy: PermissionPolicy;
  source: PermissionSource;
}

/**
 * The effective permission policy of one tool: the agent's per-tool builtin config, else the builtin
 * toolset's default, else the tool's own default. Toolset settings describe managed tools only; custom
 * and MCP tools keep their own policy (an MCP tool's may come from its server's settings).
 */
export function resolvePermission(
  tool: ToolDefinition,
  agentTools: readonly AgentTool[],
): ResolvedPermission {
  if (tool.ownership === "managed") {
    for (const entry of agentTools) {
      if (entry.type !== "builtin") continue;
      const override = entry.configs.find((config) => config.name === tool.name)?.permission_policy;
      if (override) return { policy: override, source: "agent_config" };
    }
    for (const entry of agentTools) {
      if (entry.type === "builtin" && entry.default_permission_policy) {
        return { policy: entry.default_permission_policy, source: "toolset_default" };
      }
    }
  }
  return {
    policy: tool.permissionPolicy,
    source: tool.permissionSetting === undefined ? "tool_default" : "mcp_server_config",
  };
}

/**
 * What `agent.tool_use.evaluated_permission` records for a call: `deny` when the tool is not in this
 * turn's effective set (unknown or excluded), else `ask` for `always_ask` and `allow` otherwise.
 */
export function evaluatePermission(toolName: string, effective: EffectiveToolSet): EvaluatedPermission {
  const tool = effective.tools.find((candidate) => candidate.name === toolName);
  if (!tool) return "deny";
  return tool.permissionPolicy === "always_ask" ? "ask" : "allow";
}
