import { createHash } from "node:crypto";
import type { McpListedTool, McpServerListing, McpServerSpec, ToolDefinition } from "@wakeloop/contracts";
import type { Exclusion } from "./effective-tool-set";

/** Registry names of MCP tools start with this; `mcp__<server>__*` selects one server's tools in policies. */
export const MCP_TOOL_PREFIX = "mcp__";
const MAX_TOOL_NAME = 64;

/**
 * The provider-safe registry name of a server's tool: `mcp__<server>__<tool>`. A tool name that is not
 * already lower-case letters, digits and `_`, or that does not fit in 64 characters, is rewritten and
 * suffixed with a hash of the original, so two tools of one server never share a name and the name
 * depends on nothing but the pair (the same in every wake and in `/tools`).
 */
export function mcpToolName(server: string, tool: string): string {
  const prefix = `${MCP_TOOL_PREFIX}${server}__`;
  const safe = tool.toLowerCase().replace(/[^a-z0-9_]+/g, "_");
  if (safe === tool && prefix.length + safe.length <= MAX_TOOL_NAME) return prefix + safe;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, 8);
  const room = MAX_TOOL_NAME - prefix.length - hash.length - 1;
  return `${prefix}${safe.slice(0, room)}_${hash}`;
}

/** The agent's servers, then the environment's; an environment server named like an agent's is left out. */
export function sessionMcpServers(
  agentServers: readonly McpServerSpec[],
  environmentServers: readonly McpServerSpec[],
): { servers: McpServerSpec[]; excluded: Exclusion[] } {
  const names = new Set(agentServers.map((server) => server.name));
  const servers = [...agentServers];
  const excluded: Exclusion[] = [];
  for (const server of environmentServers) {
    if (names.has(server.name)) {
      excluded.push({
        tool: `${MCP_TOOL_PREFIX}${server.name}__*`,
        step: "environment",
        rule: `mcp_server:${server.name}`,
        reason: `the environment's MCP server "${server.name}" is shadowed by the agent's server of that name`,
      });
      continue;
    }
    names.add(server.name);
    servers.push(server);
  }
  return { servers, excluded };
}

/**
 * The tool definitions of the servers that answered when the tools were last listed, and one
 * `runtime_gating` exclusion per server that did not (or was not listed yet): what `/tools` shows for a
 * server that is down. A pure function of the specs and the session's last `mcp.tools_listed`.
 */
export function mcpToolDefinitions(
  servers: readonly McpServerSpec[],
  listings: readonly McpServerListing[],
): { tools: ToolDefinition[]; excluded: Exclusion[] } {
  const tools: ToolDefinition[] = [];
  const excluded: Exclusion[] = [];
  for (const server of servers) {
    const listing = listings.find((entry) => entry.name === server.name);
    if (listing?.status !== "ready") {
      excluded.push({
        tool: `${MCP_TOOL_PREFIX}${server.name}__*`,
        step: "runtime_gating",
        rule: `mcp_server:${server.name}`,
        reason:
          listing === undefined
            ? `the tools of MCP server "${server.name}" are listed when a wake starts; none has listed them yet`
            : `MCP server "${server.name}" could not be reached: ${listing.reason}`,
      });
      continue;
    }
    const names = new Set<string>();
    for (const tool of listing.tools) {
      const definition = mcpToolDefinition(server, tool);
      // The server listed one tool twice: offering it once is what it meant.
      if (names.has(definition.name)) continue;
      names.add(definition.name);
      tools.push(definition);
    }
  }
  return { tools, excluded };
}

/**
 * One MCP tool as a registry entry. The server's annotations are hints: a read-only tool may run beside
 * others and is not destructive; anything else is assumed to write, and only an `idempotentHint` makes a
 * call safe to repeat after its outcome became unknown (invariant 7).
 */
export function mcpToolDefinition(server: McpServerSpec, tool: McpListedTool): ToolDefinition {
  const readOnly = tool.read_only === true;
  const description =
    (tool.description ?? "").trim() || `The ${tool.name} tool of MCP server ${server.name}.`;
  return {
    name: mcpToolName(server.name, tool.name),
    description: description.slice(0, 10_000),
    inputSchema: tool.input_schema,
    ownership: "mcp",
    permissionPolicy: server.permission_policy,
    effects: readOnly ? ["read", "network"] : ["read", "write", "network"],
    readOnly,
    destructive: readOnly ? false : (tool.destructive ?? true),
    idempotent: readOnly || tool.idempotent === true,
    interruptBehavior: "cancel",
    group: "mcp",
    parallelism: { parallelSafe: readOnly },
    availability: [],
    ownerOnly: false,
    executor: "mcp",
    mcpServerName: server.name,
    mcpToolName: tool.name,
  };
}
