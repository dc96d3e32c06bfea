import type { EvaluatedPermission, PendingAction } from "@wakeloop/contracts";
import type { EffectiveTool, EffectiveToolSet, PermissionSource, PipelineStep } from "./effective-tool-set";
import { evaluatePermission } from "./permission-policy";

/**
 * What `permissions_describe` and `permissions_check` return to the model. Read-only views over the
 * turn's effective tool set and the session's pending actions; snake_case because the model reads it.
 */
export interface PermissionState {
  effective: EffectiveToolSet;
  pendingActions: readonly PendingAction[];
}

export interface PermissionsDescription {
  pending_confirmations: Array<{ tool_use_id: string; tool: string; input: Record<string, unknown> }>;
  pending_client_results: Array<{ tool_use_id: string; tool: string }>;
  /** `setting` names where the policy was set, in words (`configs["echo"].permission_policy of …`). */
  always_ask_tools: Array<{ tool: string; source: PermissionSource; setting: string }>;
  unavailable_tools: Array<{ tool: string; step: PipelineStep; reason: string }>;
}

export interface PermissionCheck {
  tool: string;
  available: boolean;
  evaluated_permission: EvaluatedPermission;
  requires_confirmation: boolean;
  reason: string;
  excluded_by: { step: PipelineStep; rule: string } | null;
  /** Earlier calls of this tool still waiting for the user's confirmation. */
  pending_confirmation_ids: string[];
}

const SOURCE_TEXT: Record<PermissionSource, string> = {
  agent_config: "set by the agent's config for this tool",
  toolset_default: "the default of the agent's builtin toolset",
  mcp_server_config: "set by its MCP server's settings",
  tool_default: "the tool's default",
};

/** Where the tool's policy was set, in words: an MCP tool's names its server's setting. */
function settingOf(tool: EffectiveTool): string {
  return tool.permissionSetting ?? SOURCE_TEXT[tool.permissionSource];
}

export function describePermissions(state: PermissionState): PermissionsDescription {
  return {
    pending_confirmations: state.pendingActions
      .filter((action) => action.kind === "tool_confirmation")
      .map((action) => ({ tool_use_id: action.event_id, tool: action.name, input: action.input })),
    pending_client_results: state.pendingActions
      .filter((action) => action.kind === "custom_tool_result")
      .map((action) => ({ tool_use_id: action.event_id, tool: action.name })),
    always_ask_tools: state.effective.tools
      .filter((tool) => tool.permissionPolicy === "always_ask")
      .map((tool) => ({ tool: tool.name, source: tool.permissionSource, setting: settingOf(tool) })),
    unavailable_tools: state.effective.excluded.map(({ tool, step, reason }) => ({ tool, step, reason })),
  };
}

export function checkPermission(toolName: string, state: PermissionState): PermissionCheck {
  const evaluated = evaluatePermission(toolName, state.effective);
  const pending = state.pendingActions
    .filter((action) => action.kind === "tool_confirmation" && action.name === toolName)
    .map((action) => action.event_id);
  const base = { tool: toolName, evaluated_permission: evaluated, pending_confirmation_ids: pending };
  const tool = state.effective.tools.find((candidate) => candidate.name === toolName);
  if (tool) {
    const asks = tool.permissionPolicy === "always_ask";
    return {
      ...base,
      available: true,
      requires_confirmation: asks,
      reason: asks
        ? `${toolName} waits for the user's confirmation before each call (always_ask, ${settingOf(tool)})`
        : `${toolName} runs without confirmation (always_allow, ${settingOf(tool)})`,
      excluded_by: null,
    };
  }
  const exclusion = state.effective.excluded.find((candidate) => candidate.tool === toolName);
  return {
    ...base,
    available: false,
    requires_confirmation: false,
    reason: exclusion
      ? `${toolName} is not available: ${exclusion.reason}`
      : `no tool named "${toolName}" exists in this session; permissions_describe lists what is unavailable and why`,
    excluded_by: exclusion ? { step: exclusion.step, rule: exclusion.rule } : null,
  };
}
