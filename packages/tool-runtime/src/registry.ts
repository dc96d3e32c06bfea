import { type AgentTool, ToolDefinition, WakeloopError } from "@wakeloop/contracts";
import { type AgentDefinedToolSpec, agentDefinedToolDefinition } from "./agent-defined-tools";
import { managedTools } from "./builtins";
import { compareNames } from "./compare-names";

/**
 * Every tool a session could be offered — managed built-ins, the agent's custom tools, MCP tools —
 * sorted by name. The registry is plain data computed from code and the agent spec; it is what the
 * policy pipeline filters, never what the model sees directly.
 */
export interface ToolRegistry {
  readonly tools: readonly ToolDefinition[];
  readonly byName: ReadonlyMap<string, ToolDefinition>;
}

export type CustomToolSpec = Extract<AgentTool, { type: "custom" }>;

export interface AgentRegistryOptions {
  /** Tools listed from the agent's MCP servers (ownership "mcp", executor "mcp"). */
  mcpTools?: readonly ToolDefinition[];
  /** The agent's own enabled tools (ownership "agent"), as read at wake start. */
  agentTools?: readonly AgentDefinedToolSpec[];
}

/** Validates each definition and rejects two tools with one name (`tool_name_conflict`). */
export function createToolRegistry(definitions: readonly ToolDefinition[]): ToolRegistry {
  const byName = new Map<string, ToolDefinition>();
  for (const definition of definitions) {
    const parsed = ToolDefinition.safeParse(definition);
    if (!parsed.success) {
      throw new WakeloopError(
        "invalid_tool_definition",
        `tool "${definition.name}" is not a valid definition`,
        {
          cause: parsed.error,
          details: parsed.error.issues,
        },
      );
    }
    const existing = byName.get(definition.name);
    if (existing) {
      throw new WakeloopError(
        "tool_name_conflict",
        `two tools are named "${definition.name}" (${existing.ownership} and ${definition.ownership}); rename one`,
        { details: { name: definition.name } },
      );
    }
    // The definition itself, not zod's copy: its schema objects keep their identity for caches.
    byName.set(definition.name, definition);
  }
  const tools = [...byName.values()].sort((a, b) => compareNames(a.name, b.name));
  return { tools, byName: new Map(tools.map((tool) => [tool.name, tool])) };
}

/** The registry of one agent: managed built-ins, its custom tools, its MCP tools and its own tools. */
export function agentToolRegistry(
  agent: { tools: readonly AgentTool[] },
  options: AgentRegistryOptions = {},
): ToolRegistry {
  const custom = agent.tools.flatMap((tool) => (tool.type === "custom" ? [customToolDefinition(tool)] : []));
  const own = (options.agentTools ?? []).map(agentDefinedToolDefinition);
  return createToolRegistry([...managedTools, ...custom, ...(options.mcpTools ?? []), ...own]);
}

/**
 * A custom tool is fulfilled by the client: the harness emits `agent.custom_tool_use`, the session
 * pauses, and `user.custom_tool_result` carries the result. Nothing runs on our side, so the call needs
 * no confirmation and may be emitted alongside others.
 */
export function customToolDefinition(spec: CustomToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.input_schema,
    ownership: "custom",
    permissionPolicy: "always_allow",
    effects: [],
    readOnly: false,
    destructive: false,
    idempotent: false,
    interruptBehavior: "cancel",
    group: "custom",
    parallelism: { parallelSafe: true },
    availability: [],
    ownerOnly: false,
    pauses: "client_result",
    executor: "client",
  };
}
