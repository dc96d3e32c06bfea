import { AGENT_TOOL_PREFIX, type JsonSchemaObject, type ToolDefinition } from "@wakeloop/contracts";
import type { Exclusion } from "./effective-tool-set";

/** What a wake knows of one agent-defined tool: read once at wake start, fixed for the wake. */
export interface AgentDefinedToolSpec {
  /** The stored name; the model sees `agent__<name>`. */
  name: string;
  description: string;
  parameterSchema: JsonSchemaObject;
  /** The version this wake offers and runs, even if a newer one is saved during the wake. */
  version: number;
  enabled: boolean;
}

export function agentToolName(name: string): string {
  return `${AGENT_TOOL_PREFIX}${name}`;
}

/** The stored name of an offered agent-defined tool name, or null for any other tool name. */
export function storedAgentToolName(toolName: string): string | null {
  return toolName.startsWith(AGENT_TOOL_PREFIX) ? toolName.slice(AGENT_TOOL_PREFIX.length) : null;
}

/**
 * An agent-defined tool runs the agent's JavaScript in the session's sandbox, with the sandbox's full
 * access, so every call asks (like `run_sandbox_code`). Per-tool permission settings describe managed
 * tools only, so nothing turns the ask off: the agent could otherwise rewrite an allowed tool's code.
 * Policies can still deny or allow-list them all as group `agent_tools` (valid before any exists).
 */
export function agentDefinedToolDefinition(spec: AgentDefinedToolSpec): ToolDefinition {
  return {
    name: agentToolName(spec.name),
    description: `${spec.description} (agent-defined tool, version ${spec.version})`,
    inputSchema: spec.parameterSchema,
    ownership: "agent",
    permissionPolicy: "always_ask",
    effects: ["write", "execute"],
    readOnly: false,
    destructive: true,
    idempotent: false,
    interruptBehavior: "cancel",
    group: "agent_tools",
    parallelism: { parallelSafe: false, resourceKey: "shell" },
    availability: ["sandbox.ready"],
    ownerOnly: false,
    executor: "sandbox",
  };
}

/** A disabled agent-defined tool is not offered; `/tools` and permissions_describe say why. */
export function disabledAgentToolExclusion(spec: AgentDefinedToolSpec): Exclusion {
  return {
    tool: agentToolName(spec.name),
    step: "agent",
    rule: `agent_tools.disabled:${spec.name}`,
    reason: "disabled by the agent (disable_tool); enable_tool offers it again from the next wake",
  };
}
