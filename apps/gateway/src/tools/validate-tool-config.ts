import type { AgentSpec, ToolPolicy } from "@wakeloop/contracts";
import {
  validateAgentTools as validateAgentToolConfig,
  validateEnvironmentPolicy,
} from "@wakeloop/tool-runtime";

/**
 * Save-time tool checks (DESIGN §5): an unknown tool name in a policy or builtin config is rejected
 * when the agent or environment is saved, with the valid names (`unknown_tool`, a 400), never
 * discovered at run time.
 */
export function validateAgentTools(spec: AgentSpec): void {
  validateAgentToolConfig(spec);
}

export function validateEnvironmentTools(spec: { tool_policy: ToolPolicy }): void {
  validateEnvironmentPolicy(spec.tool_policy);
}
