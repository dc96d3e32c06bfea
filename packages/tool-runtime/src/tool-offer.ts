import type { AgentTool, ModelProvider, ToolPolicy } from "@wakeloop/contracts";
import { z } from "zod";
import { TOOL_SEARCH } from "./builtins/tool-search";
import { compareNames } from "./compare-names";
import { type EffectiveTool, EffectiveToolSet } from "./effective-tool-set";
import { TOOL_PROFILES } from "./profiles";
import { firstMatch } from "./selectors";

/**
 * What a general agent needs at every turn (docs/tool-search.md): files, the shell, the web and its
 * state. Offered whenever the policy pipeline and runtime gating keep them; every other tool waits for
 * `tool_search`. `edit` and `apply_patch` are one tool per provider (provider preference keeps one).
 */
export const CORE_TOOLS: readonly string[] = [
  "read",
  "write",
  "edit",
  "apply_patch",
  "ls",
  "glob",
  "grep",
  "bash",
  "process",
  "web_fetch",
  "web_search",
  "get_state",
  "set_state",
];

/**
 * Where one tool stands in the model's request, and why. `rule` is compact and stable (`core`,
 * `eager:agent.also_allow:group:web`, `revealed`, `deferred`); `reason` is the sentence shown to people.
 */
export const ToolPlacement = z.object({ tool: z.string(), rule: z.string(), reason: z.string() });
export type ToolPlacement = z.infer<typeof ToolPlacement>;

/**
 * A session's tools for its next turn: `tools` is every tool it may call (policy, gating and approvals
 * work on this set), `offered` the definitions the request carries, in the request's order, and
 * `deferred` the rest of `tools`, found with `tool_search`.
 */
export const SessionToolSet = EffectiveToolSet.extend({
  offered: z.array(ToolPlacement),
  deferred: z.array(ToolPlacement),
});
export type SessionToolSet = z.infer<typeof SessionToolSet>;

/** What of the agent decides which tools skip the search. */
export interface EagerChoice {
  tool_policy: ToolPolicy;
  tools: readonly AgentTool[];
  provider: ModelProvider;
}

/**
 * Splits the callable tools into offered and deferred, a pure function of the set, the agent's policy
 * and the names the session revealed (in reveal order, `state.revealed_tools`), so every worker and a
 * replay build the same request. Offered come first in the set's order (by name: core, `tool_search`
 * and the agent's eager choices), then the revealed ones in the order they were revealed: a reveal only
 * appends, so the request's earlier bytes stay a cacheable prefix. Without `tool_search` in the set
 * (a policy removed it) nothing is deferred, since nothing could be found.
 */
export function offerTools(
  effective: EffectiveToolSet,
  agent: EagerChoice,
  revealed: readonly string[],
): SessionToolSet {
  const searchable = effective.tools.some((tool) => tool.name === TOOL_SEARCH);
  if (!searchable) {
    const reason = `${TOOL_SEARCH} is not available to this session, so every tool is offered`;
    return {
      ...effective,
      offered: effective.tools.map((tool) => ({ tool: tool.name, rule: "no_search", reason })),
      deferred: [],
    };
  }
  const eager = eagerSelectors(agent);
  const base: ToolPlacement[] = [];
  const later = new Map<string, ToolPlacement>();
  const deferred: ToolPlacement[] = [];
  const revealedNames = new Set(revealed);
  for (const tool of effective.tools) {
    if (tool.name === TOOL_SEARCH) continue;
    const up = upFront(tool, eager);
    if (up !== null) base.push({ tool: tool.name, ...up });
    else if (revealedNames.has(tool.name))
      later.set(tool.name, {
        tool: tool.name,
        rule: "revealed",
        reason: `revealed by ${TOOL_SEARCH} (or called by name) earlier in this session`,
      });
    else
      deferred.push({
        tool: tool.name,
        rule: "deferred",
        reason: `not in the core set nor opted in eagerly; ${TOOL_SEARCH} finds it`,
      });
  }
  // Offered once anything is deferred or revealed (so it stays in place when the last deferred tool is
  // revealed); with every tool up front there is nothing to find, and it waits like a deferred tool.
  if (deferred.length > 0 || later.size > 0) {
    base.push({
      tool: TOOL_SEARCH,
      rule: "search",
      reason: `finds the ${deferred.length} deferred tools`,
    });
    base.sort((a, b) => compareNames(a.tool, b.tool));
  } else {
    deferred.push({ tool: TOOL_SEARCH, rule: "nothing_to_search", reason: "every tool is offered up front" });
  }
  const appended = revealed.flatMap((name) => {
    const placement = later.get(name);
    later.delete(name);
    return placement === undefined ? [] : [placement];
  });
  return { ...effective, offered: [...base, ...appended], deferred };
}

/** The definitions the request carries, in `offered` order. */
export function offeredTools(set: SessionToolSet): EffectiveTool[] {
  const byName = new Map(set.tools.map((tool) => [tool.name, tool]));
  return set.offered.flatMap((placement) => {
    const tool = byName.get(placement.tool);
    return tool === undefined ? [] : [tool];
  });
}

interface EagerSelectors {
  source: string;
  selectors: readonly string[];
}

/**
 * The agent's own choices opt tools in eagerly: its profile (the agent's, and for this provider), its
 * allow and also_allow lists, and builtin configs with `enabled: true`. The platform's global policy
 * and the environment only narrow, so they opt nothing in.
 */
function eagerSelectors(agent: EagerChoice): EagerSelectors[] {
  const policy = agent.tool_policy;
  const byProvider = policy.by_provider?.[agent.provider];
  const lists: EagerSelectors[] = [
    { source: "agent.allow", selectors: policy.allow ?? [] },
    { source: "agent.also_allow", selectors: policy.also_allow ?? [] },
    { source: `agent.by_provider.${agent.provider}.allow`, selectors: byProvider?.allow ?? [] },
    { source: `agent.by_provider.${agent.provider}.also_allow`, selectors: byProvider?.also_allow ?? [] },
    {
      source: "agent.tools.configs",
      selectors: agent.tools.flatMap((entry) =>
        entry.type === "builtin"
          ? entry.configs.filter((config) => config.enabled === true).map((config) => config.name)
          : [],
      ),
    },
  ];
  if (policy.profile) {
    lists.push({ source: `agent.profile:${policy.profile}`, selectors: TOOL_PROFILES[policy.profile] });
  }
  if (byProvider?.profile) {
    lists.push({
      source: `agent.by_provider.${agent.provider}.profile:${byProvider.profile}`,
      selectors: TOOL_PROFILES[byProvider.profile],
    });
  }
  return lists;
}

function upFront(tool: EffectiveTool, eager: readonly EagerSelectors[]): Omit<ToolPlacement, "tool"> | null {
  if (CORE_TOOLS.includes(tool.name)) return { rule: "core", reason: "in the core set offered every turn" };
  if (tool.ownership === "custom") {
    return { rule: "custom", reason: "a custom tool the agent declares is offered every turn" };
  }
  for (const { source, selectors } of eager) {
    const selector = firstMatch(selectors, tool);
    if (selector !== undefined) {
      return { rule: `eager:${source}:${selector}`, reason: `opted in eagerly by ${source} "${selector}"` };
    }
  }
  return null;
}
