import type {
  AgentTool,
  AllowDeny,
  ModelProvider,
  ToolDefinition,
  ToolPolicy,
  ToolProfile,
} from "@wakeloop/contracts";
import { compareNames } from "./compare-names";
import type { Exclusion, PipelineStep } from "./effective-tool-set";
import { TOOL_PROFILES } from "./profiles";
import type { ToolRegistry } from "./registry";
import { firstMatch } from "./selectors";
import { type SpawnPlace, type SubSessionLimits, spawnRefusal } from "./sub-session-limits";
import { offeredName, type ToolNamesChoice, toolNamesFor } from "./tool-names";

/** Everything the pipeline reads, passed in explicitly: no hidden state, no clock. */
export interface PolicyContext {
  registry: ToolRegistry;
  /** The platform's policy (service configuration). */
  globalPolicy: ToolPolicy;
  agent: { tool_policy: ToolPolicy; tools: readonly AgentTool[] };
  /** The session's environment policy; null for a session without an environment. */
  environmentPolicy: ToolPolicy | null;
  provider: ModelProvider;
  /** 0 for a root session, 1 for its child, … */
  subSessionDepth: number;
  /** Depth at which sessions may no longer spawn sessions. */
  maxSubSessionDepth: number;
  /** Sub-sessions this session has spawned. */
  subSessionChildren: number;
  /** Sub-sessions at which a session may no longer spawn. */
  maxSubSessionChildren: number;
  isOwner: boolean;
}

export interface PolicyResult {
  tools: ToolDefinition[];
  excluded: Exclusion[];
}

type Check = (tool: ToolDefinition) => Omit<Exclusion, "tool" | "step"> | null;

/**
 * The policy steps of DESIGN §5 in order, after the naming profile that keeps one name per
 * implementation (`tool_names`). Every step only removes tools (a later step never brings a
 * tool back), deny is checked before allow inside a step, and the first step that removes a tool is
 * the one recorded. Global and agent `also_allow` entries (and builtin configs with `enabled: true`)
 * widen the profiles and their own level's allow list. The environment only narrows: its `also_allow`
 * widens its own profile and allow list, never the agent's. An empty `allow` list means "no allow
 * list" (use `deny: ["*"]` to remove everything).
 */
export function applyPolicyPipeline(ctx: PolicyContext): PolicyResult {
  const steps = pipelineSteps(ctx);
  const tools: ToolDefinition[] = [];
  const excluded: Exclusion[] = [];
  for (const tool of ctx.registry.tools) {
    const exclusion = firstExclusion(steps, tool);
    if (exclusion) excluded.push(exclusion);
    else tools.push(tool);
  }
  return { tools, excluded };
}

function firstExclusion(steps: ReadonlyArray<[PipelineStep, Check]>, tool: ToolDefinition): Exclusion | null {
  for (const [step, check] of steps) {
    const hit = check(tool);
    if (hit) return { tool: tool.name, step, ...hit };
  }
  return null;
}

function pipelineSteps(ctx: PolicyContext): Array<[PipelineStep, Check]> {
  const { globalPolicy: global, agent, environmentPolicy: env, provider } = ctx;
  const agentPolicy = agent.tool_policy;
  const enabledByConfig = builtinConfigs(agent.tools)
    .filter((config) => config.enabled === true)
    .map((config) => config.name);
  const alsoAllowed = canonical([
    ...(global.also_allow ?? []),
    ...(global.by_provider?.[provider]?.also_allow ?? []),
    ...(agentPolicy.also_allow ?? []),
    ...(agentPolicy.by_provider?.[provider]?.also_allow ?? []),
    ...enabledByConfig,
  ]);

  const profile = agentPolicy.profile
    ? { id: agentPolicy.profile, source: "agent.profile" }
    : global.profile
      ? { id: global.profile, source: "global.profile" }
      : null;
  const agentProviderProfile = agentPolicy.by_provider?.[provider]?.profile;
  const globalProviderProfile = global.by_provider?.[provider]?.profile;
  const providerProfile = agentProviderProfile
    ? { id: agentProviderProfile, source: `agent.by_provider.${provider}.profile` }
    : globalProviderProfile
      ? { id: globalProviderProfile, source: `global.by_provider.${provider}.profile` }
      : null;

  return [
    ["tool_names", namingCheck(toolNamesFor(global, agentPolicy, provider))],
    ["profile", profileCheck(profile, alsoAllowed, "")],
    ["provider_profile", profileCheck(providerProfile, alsoAllowed, `for ${provider} `)],
    ["global", levelCheck(global, "global")],
    ["provider", levelCheck(global.by_provider?.[provider], `global.by_provider.${provider}`)],
    [
      "agent",
      all([
        levelCheck(agentPolicy, "agent", [], "deny"),
        disabledByConfig(agent.tools),
        levelCheck(agentPolicy, "agent", enabledByConfig, "allow"),
      ]),
    ],
    ["agent_provider", levelCheck(agentPolicy.by_provider?.[provider], `agent.by_provider.${provider}`)],
    ["environment", environmentCheck(env, provider)],
    [
      "sub_session_depth",
      spawnCheck(
        { depth: ctx.subSessionDepth, childCount: ctx.subSessionChildren },
        { maxDepth: ctx.maxSubSessionDepth, maxChildren: ctx.maxSubSessionChildren },
      ),
    ],
    ["owner_only", ownerCheck(ctx.isOwner)],
  ];
}

/** One name per implementation: the names other naming profiles give a tool are hidden. */
function namingCheck(choice: ToolNamesChoice): Check {
  return (tool) => {
    const offered = tool.ownership === "managed" ? offeredName(tool.name, choice.id) : null;
    if (offered === null) return null;
    return {
      rule: `tool_names:${choice.id}`,
      reason:
        `${tool.name} is another name of ${offered} (one implementation); the "${choice.id}" tool names ` +
        `(${choice.source}) offer ${offered}`,
    };
  };
}

function profileCheck(
  profile: { id: ToolProfile; source: string } | null,
  alsoAllowed: readonly string[],
  scope: string,
): Check {
  return (tool) => {
    // Profiles describe managed tools; custom and MCP tools were configured on purpose.
    if (!profile || tool.ownership !== "managed") return null;
    if (firstMatch(TOOL_PROFILES[profile.id], tool) || firstMatch(alsoAllowed, tool)) return null;
    return {
      rule: `profile:${profile.id}`,
      reason: `not in the "${profile.id}" profile ${scope}(${profile.source}) nor in any also_allow`,
    };
  };
}

type LevelPart = "deny" | "allow" | "both";

function levelCheck(
  policy: AllowDeny | undefined,
  label: string,
  extraAllowed: readonly string[] = [],
  part: LevelPart = "both",
): Check {
  if (!policy) return () => null;
  const deny = part === "allow" ? [] : canonical(policy.deny ?? []);
  const allow = part !== "deny" && policy.allow && policy.allow.length > 0 ? canonical(policy.allow) : null;
  const allowed = allow ? [...allow, ...(policy.also_allow ?? []), ...extraAllowed] : [];
  return (tool) => {
    const denied = firstMatch(deny, tool);
    if (denied)
      return { rule: `${label}.deny:${denied}`, reason: `denied by ${label}.deny rule "${denied}"` };
    if (allow && !firstMatch(allowed, tool)) {
      return { rule: `${label}.allow`, reason: `not matched by ${label}.allow [${allow.join(", ")}]` };
    }
    return null;
  };
}

function disabledByConfig(agentTools: readonly AgentTool[]): Check {
  const disabled = new Set(
    builtinConfigs(agentTools)
      .filter((config) => config.enabled === false)
      .map((config) => config.name),
  );
  return (tool) =>
    tool.ownership === "managed" && disabled.has(tool.name)
      ? {
          rule: `agent.tools.configs:${tool.name}`,
          reason: `disabled by agent.tools config "${tool.name}" (enabled: false)`,
        }
      : null;
}

function environmentCheck(env: ToolPolicy | null, provider: ModelProvider): Check {
  if (!env) return () => null;
  const alsoAllowed = [...(env.also_allow ?? []), ...(env.by_provider?.[provider]?.also_allow ?? [])];
  const envProfile = env.profile ? { id: env.profile, source: "environment.profile" } : null;
  return all([
    levelCheck(env, "environment", [], "deny"),
    levelCheck(env.by_provider?.[provider], `environment.by_provider.${provider}`, [], "deny"),
    (tool) => {
      const hit = profileCheck(envProfile, alsoAllowed, "")(tool);
      return hit ? { ...hit, rule: `environment.${hit.rule}` } : null;
    },
    levelCheck(env, "environment", [], "allow"),
    levelCheck(env.by_provider?.[provider], `environment.by_provider.${provider}`, [], "allow"),
  ]);
}

/** The sub-session limits (depth, children per session) remove the tools that spawn sessions. */
function spawnCheck(place: SpawnPlace, limits: SubSessionLimits): Check {
  const refusal = spawnRefusal(place, limits);
  return (tool) => (refusal !== null && tool.effects.includes("spawn") ? refusal : null);
}

function ownerCheck(isOwner: boolean): Check {
  return (tool) =>
    !isOwner && tool.ownerOnly
      ? { rule: "owner_only", reason: "only the owner may use this tool; the caller is not the owner" }
      : null;
}

/** Runs checks in order and returns the first hit: inside one step, deny is listed before allow. */
function all(checks: readonly Check[]): Check {
  return (tool) => {
    for (const check of checks) {
      const hit = check(tool);
      if (hit) return hit;
    }
    return null;
  };
}

/**
 * Selector lists sorted and de-duplicated, so the same policy written in another order gives the same
 * effective set and the same reason strings (the first matching deny rule is named).
 */
function canonical(selectors: readonly string[]): string[] {
  return [...new Set(selectors)].sort(compareNames);
}

function builtinConfigs(agentTools: readonly AgentTool[]) {
  return agentTools.flatMap((entry) => (entry.type === "builtin" ? entry.configs : []));
}
