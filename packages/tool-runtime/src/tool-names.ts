import type { ModelProvider, ToolNames, ToolPolicy } from "@wakeloop/contracts";

/**
 * Tools the references name differently, one implementation each (issue #11: the OpenClaw and openboa
 * names are aliases by provider profile): keyed by the registered tool, the name each naming profile
 * offers. The registry holds every name so a call can be planned and run under any of them, but a model
 * is offered one name per implementation, the profile's; the others are hidden at the `tool_names` step.
 */
export const SPAWN_NAMES = {
  personal_agent: "spawn_session",
  openboa: "session_delegate",
  openclaw: "sessions_spawn",
} as const satisfies Record<ToolNames, string>;

export const NAMES_BY_PROFILE: Readonly<Record<string, Readonly<Record<ToolNames, string>>>> = {
  spawn_session: SPAWN_NAMES,
};

/** Wakeloop's own names are personal-agent's (DESIGN §5), so that is the default. */
export const DEFAULT_TOOL_NAMES: ToolNames = "personal_agent";

/** The naming profile in force and where it was set. */
export interface ToolNamesChoice {
  id: ToolNames;
  source: string;
}

/**
 * The most specific setting wins: the agent's for this provider, the agent's, the platform's for this
 * provider, the platform's, then the default.
 */
export function toolNamesFor(
  global: ToolPolicy,
  agent: ToolPolicy,
  provider: ModelProvider,
): ToolNamesChoice {
  const candidates: Array<[ToolNames | undefined, string]> = [
    [agent.by_provider?.[provider]?.tool_names, `agent.by_provider.${provider}.tool_names`],
    [agent.tool_names, "agent.tool_names"],
    [global.by_provider?.[provider]?.tool_names, `global.by_provider.${provider}.tool_names`],
    [global.tool_names, "global.tool_names"],
  ];
  for (const [id, source] of candidates) if (id !== undefined) return { id, source };
  return { id: DEFAULT_TOOL_NAMES, source: "default" };
}

/** For a name of a tool the references name differently: the name `choice` offers, if not this one. */
export function offeredName(name: string, choice: ToolNames): string | null {
  for (const names of Object.values(NAMES_BY_PROFILE)) {
    if (Object.values(names).includes(name)) return names[choice] === name ? null : names[choice];
  }
  return null;
}
