import { createHash } from "node:crypto";
import {
  MCP_TOOL_PREFIX,
  type McpListedTool,
  type McpServerListing,
  type McpServerSpec,
  type PermissionPolicy,
  type ToolDefinition,
} from "@wakeloop/contracts";
import type { Exclusion } from "./effective-tool-set";

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

export interface SessionMcpServers {
  servers: McpServerSpec[];
  /** The names of `servers` that are the environment's (the others are the agent's). */
  environmentServers: ReadonlySet<string>;
  excluded: Exclusion[];
}

/** The agent's servers, then the environment's; an environment server named like an agent's is left out. */
export function sessionMcpServers(
  agentServers: readonly McpServerSpec[],
  environmentServers: readonly McpServerSpec[],
): SessionMcpServers {
  const names = new Set(agentServers.map((server) => server.name));
  const servers = [...agentServers];
  const fromEnvironment = new Set<string>();
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
    fromEnvironment.add(server.name);
    servers.push(server);
  }
  return { servers, environmentServers: fromEnvironment, excluded };
}

/**
 * The tool definitions of the servers that answered when the tools were last listed, and one
 * `runtime_gating` exclusion per server that did not (or was not listed yet): what `/tools` shows for a
 * server that is down. A tool its server's settings disable is excluded with the setting that did it,
 * and a config naming a tool the server did not list is reported the same way rather than ignored. A
 * pure function of the specs and the session's last `mcp.tools_listed`.
 */
export function mcpToolDefinitions(
  attached: Pick<SessionMcpServers, "servers" | "environmentServers">,
  listings: readonly McpServerListing[],
): { tools: ToolDefinition[]; excluded: Exclusion[] } {
  const tools: ToolDefinition[] = [];
  const excluded: Exclusion[] = [];
  for (const server of attached.servers) {
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
    const owner = attached.environmentServers.has(server.name) ? "environment" : "agent";
    const names = new Set<string>();
    for (const tool of listing.tools) {
      const definition = mcpToolDefinition(server, tool, owner);
      // The server listed one tool twice: offering it once is what it meant.
      if (names.has(definition.name)) continue;
      names.add(definition.name);
      const disabledBy = disablingSetting(server, tool.name);
      if (disabledBy === null) {
        tools.push(definition);
        continue;
      }
      excluded.push({
        tool: definition.name,
        step: owner,
        rule: `mcp_config:${server.name}/${disabledBy === "configs" ? tool.name : "*"}`,
        reason: `${disabledBy === "configs" ? `configs["${tool.name}"].enabled` : "default_config.enabled"} of the ${owner}'s MCP server "${server.name}" is false`,
      });
    }
    const listed = new Set(listing.tools.map((tool) => tool.name));
    for (const config of server.configs.filter((entry) => !listed.has(entry.name))) {
      excluded.push({
        tool: mcpToolName(server.name, config.name),
        step: owner,
        rule: `mcp_config:${server.name}/${config.name}`,
        reason: `configs["${config.name}"] of the ${owner}'s MCP server "${server.name}" names a tool the server does not list`,
      });
    }
  }
  return { tools, excluded };
}

type McpServerOwner = "agent" | "environment";

/**
 * The server's policy for a tool: its config's, else `default_config`'s, else the server's, else
 * always_ask; with the setting it came from, in words, unless it is that last default.
 */
function mcpToolPolicy(
  server: McpServerSpec,
  tool: string,
  owner: McpServerOwner,
): { policy: PermissionPolicy; setting?: string } {
  const of = `of the ${owner}'s MCP server "${server.name}"`;
  const configured = server.configs.find((config) => config.name === tool)?.permission_policy;
  if (configured !== undefined) {
    return { policy: configured, setting: `configs["${tool}"].permission_policy ${of}` };
  }
  if (server.default_config.permission_policy !== undefined) {
    return {
      policy: server.default_config.permission_policy,
      setting: `default_config.permission_policy ${of}`,
    };
  }
  if (server.permission_policy !== undefined) {
    return { policy: server.permission_policy, setting: `permission_policy ${of}` };
  }
  return { policy: "always_ask" };
}

/** The setting that turns a tool off, or null when it is offered. */
function disablingSetting(server: McpServerSpec, tool: string): "configs" | "default_config" | null {
  const enabled = server.configs.find((config) => config.name === tool)?.enabled;
  if (enabled !== undefined) return enabled ? null : "configs";
  return server.default_config.enabled ? null : "default_config";
}

/**
 * Why a custom tool or one of the agent's own tools may not take `name`, or null: names under `mcp__`
 * would read as a server's tool in policies, events and `/tools`.
 */
export function reservedToolNameProblem(name: string): string | null {
  return name.startsWith(MCP_TOOL_PREFIX)
    ? `"${name}" is reserved: names starting with ${MCP_TOOL_PREFIX} belong to the tools of MCP servers (mcp__<server>__<tool>); choose another name`
    : null;
}

/**
 * One MCP tool as a registry entry. The server's annotations are hints: a read-only tool may run beside
 * others and is not destructive; anything else is assumed to write, and only an `idempotentHint` makes a
 * call safe to repeat after its outcome became unknown (invariant 7).
 */
export function mcpToolDefinition(
  server: McpServerSpec,
  tool: McpListedTool,
  owner: McpServerOwner,
): ToolDefinition {
  const readOnly = tool.read_only === true;
  const permission = mcpToolPolicy(server, tool.name, owner);
  const description =
    (tool.description ?? "").trim() || `The ${tool.name} tool of MCP server ${server.name}.`;
  return {
    name: mcpToolName(server.name, tool.name),
    description: description.slice(0, 10_000),
    inputSchema: tool.input_schema,
    ownership: "mcp",
    permissionPolicy: permission.policy,
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
    ...(permission.setting === undefined ? {} : { permissionSetting: permission.setting }),
  };
}
