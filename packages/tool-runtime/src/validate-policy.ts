import {
  type AgentTool,
  MCP_TOOL_PREFIX,
  type McpServerSpec,
  type ToolPolicy,
  WakeloopError,
} from "@wakeloop/contracts";
import { managedTools } from "./builtins";
import { compareNames } from "./compare-names";
import { schemaProblem } from "./input-validation";
import { reservedToolNameProblem } from "./mcp-tools";
import { STANDARD_GROUPS } from "./profiles";
import {
  type AgentRegistryOptions,
  agentToolRegistry,
  createToolRegistry,
  type ToolRegistry,
} from "./registry";
import { groupSelector, isGroupSelector, isPatternSelector, selectorMatches } from "./selectors";

/**
 * Save-time checks (the gateway runs them when an agent or environment is saved): a policy naming a
 * tool or group that does not exist is rejected then, with the valid names, instead of silently
 * matching nothing at run time.
 */

interface UnknownSelector {
  selector: string;
  where: string;
}

/**
 * MCP tools are listed only when a wake starts, so a selector under `mcp__<server>__` is known when
 * the server is one of `mcpServers` (`"*"`: any server, for environments that serve many agents).
 */
type KnownMcpServers = ReadonlySet<string> | "*";

/** Throws `unknown_tool` when a selector of the policy names no known tool or group. */
export function validateToolPolicy(
  policy: ToolPolicy,
  registry: ToolRegistry,
  where: string,
  mcpServers: KnownMcpServers = new Set(),
): void {
  throwIfUnknown(unknownSelectors(policy, registry, where, mcpServers), registry);
}

/**
 * Validates an agent's tools and tool policy together; returns the agent's registry. Rejects custom
 * tools whose name is taken (`tool_name_conflict`) or reserved for MCP tools (`reserved_tool_name`) or
 * whose input schema is unusable
 * (`invalid_tool_schema`), more than one builtin toolset or a tool configured twice
 * (`invalid_tool_config`), and unknown names in
 * builtin configs or policies (`unknown_tool`).
 */
export function validateAgentTools(
  agent: { tools: readonly AgentTool[]; tool_policy: ToolPolicy; mcp_servers?: readonly McpServerSpec[] },
  options: AgentRegistryOptions = {},
): ToolRegistry {
  if (agent.tools.filter((tool) => tool.type === "builtin").length > 1) {
    throw new WakeloopError("invalid_tool_config", "an agent has at most one builtin toolset in tools");
  }
  for (const tool of agent.tools) {
    if (tool.type === "builtin") {
      const names = tool.configs.map((config) => config.name);
      const repeated = names.find((name, index) => names.indexOf(name) !== index);
      if (repeated) {
        throw new WakeloopError("invalid_tool_config", `the builtin toolset configures "${repeated}" twice`);
      }
      continue;
    }
    const reserved = reservedToolNameProblem(tool.name);
    if (reserved) {
      throw new WakeloopError("reserved_tool_name", `custom tool ${reserved}`, {
        details: { tool: tool.name },
      });
    }
    const problem = schemaProblem(tool.input_schema);
    if (problem) {
      throw new WakeloopError("invalid_tool_schema", `custom tool "${tool.name}": ${problem}`, {
        details: { tool: tool.name },
      });
    }
  }
  const registry = agentToolRegistry(agent, options);
  const unknown: UnknownSelector[] = [];
  agent.tools.forEach((tool, index) => {
    if (tool.type !== "builtin") return;
    for (const config of tool.configs) {
      if (registry.byName.get(config.name)?.ownership !== "managed") {
        unknown.push({ selector: config.name, where: `tools[${index}].configs` });
      }
    }
  });
  const servers = new Set((agent.mcp_servers ?? []).map((server) => server.name));
  unknown.push(...unknownSelectors(agent.tool_policy, registry, "tool_policy", servers));
  throwIfUnknown(unknown, registry);
  return registry;
}

/**
 * An environment serves many agents, so its policy is checked against the managed tools and the
 * standard groups (`group:custom`, `group:mcp` name other agents' tools without listing them).
 */
export function validateEnvironmentPolicy(policy: ToolPolicy): void {
  // Names are the agent's and the platform's choice: an environment only narrows what is offered.
  const named = [
    ...(policy.tool_names === undefined ? [] : ["tool_policy.tool_names"]),
    ...Object.entries(policy.by_provider ?? {}).flatMap(([provider, level]) =>
      level?.tool_names === undefined ? [] : [`tool_policy.by_provider.${provider}.tool_names`],
    ),
  ];
  if (named.length > 0) {
    throw new WakeloopError(
      "invalid_tool_config",
      `${named.join(", ")}: an environment cannot choose tool names; set tool_names on the agent's tool_policy or the platform's GLOBAL_TOOL_POLICY`,
    );
  }
  validateToolPolicy(policy, createToolRegistry(managedTools), "tool_policy", "*");
}

function unknownSelectors(
  policy: ToolPolicy,
  registry: ToolRegistry,
  where: string,
  mcpServers: KnownMcpServers,
): UnknownSelector[] {
  const lists: Array<[string, readonly string[] | undefined]> = [
    [`${where}.allow`, policy.allow],
    [`${where}.also_allow`, policy.also_allow],
    [`${where}.deny`, policy.deny],
  ];
  for (const [provider, level] of Object.entries(policy.by_provider ?? {})) {
    lists.push(
      [`${where}.by_provider.${provider}.allow`, level?.allow],
      [`${where}.by_provider.${provider}.also_allow`, level?.also_allow],
      [`${where}.by_provider.${provider}.deny`, level?.deny],
    );
  }
  const groups = knownGroups(registry);
  return lists.flatMap(([listWhere, selectors]) =>
    (selectors ?? [])
      .filter((selector) => !isKnown(selector, registry, groups) && !isMcpSelector(selector, mcpServers))
      .map((selector) => ({ selector, where: listWhere })),
  );
}

function isKnown(selector: string, registry: ToolRegistry, groups: ReadonlySet<string>): boolean {
  if (isGroupSelector(selector)) return groups.has(selector);
  // A pattern that matches nothing is almost always a typo ("shel_*"), so it is rejected too.
  if (isPatternSelector(selector)) return registry.tools.some((tool) => selectorMatches(selector, tool));
  return registry.byName.has(selector);
}

function isMcpSelector(selector: string, servers: KnownMcpServers): boolean {
  if (!selector.startsWith(MCP_TOOL_PREFIX)) return false;
  const server = selector.slice(MCP_TOOL_PREFIX.length).split("__")[0] ?? "";
  return servers === "*" ? server.length > 0 : servers.has(server);
}

function knownGroups(registry: ToolRegistry): Set<string> {
  return new Set([...STANDARD_GROUPS, ...registry.tools.map((tool) => tool.group)].map(groupSelector));
}

function throwIfUnknown(unknown: readonly UnknownSelector[], registry: ToolRegistry): void {
  if (unknown.length === 0) return;
  const names = registry.tools.map((tool) => tool.name);
  const groups = [...knownGroups(registry)].sort(compareNames);
  const listed = unknown.map((entry) => `"${entry.selector}" in ${entry.where}`).join(", ");
  throw new WakeloopError(
    "unknown_tool",
    `unknown tool or group: ${listed}. Valid tool names: ${names.join(", ")}. Valid groups: ${groups.join(", ")}. ` +
      "A * pattern must match at least one tool name.",
    { details: { unknown, valid_tools: names, valid_groups: groups } },
  );
}
