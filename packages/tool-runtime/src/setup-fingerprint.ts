import type { AgentSpec, EnvironmentSpec } from "@wakeloop/contracts";
import { stableHash } from "./stable-json";

/**
 * The setup a session runs with (openboa "agent setup"), as section fingerprints: two sessions whose
 * fingerprints match were given the same model, prompt, tools, policy and environment, so their work
 * can be compared or reused without second-guessing the setup. Pure: specs in, hashes out.
 */

export const SETUP_SECTIONS = ["model", "prompt", "tools", "policy", "environment"] as const;
export type SetupSection = (typeof SETUP_SECTIONS)[number];

export interface SetupInputs {
  agent: Pick<AgentSpec, "model" | "system" | "tools" | "tool_policy" | "loop_detection" | "budget">;
  environment: Pick<EnvironmentSpec, "config" | "tool_policy"> | null;
}

export interface SetupFingerprint {
  /** Of every section together. */
  fingerprint: string;
  sections: Record<SetupSection, string>;
}

/** Short enough to read and compare at a glance; 64 bits keep accidental matches out of reach. */
const short = (value: unknown) => stableHash(value).slice(0, 16);

export function setupSections(setup: SetupInputs): Record<SetupSection, unknown> {
  const { agent, environment } = setup;
  return {
    model: agent.model,
    prompt: agent.system,
    tools: agent.tools,
    policy: { tool_policy: agent.tool_policy, loop_detection: agent.loop_detection, budget: agent.budget },
    environment:
      environment === null ? null : { config: environment.config, tool_policy: environment.tool_policy },
  };
}

export function setupFingerprint(setup: SetupInputs): SetupFingerprint {
  const values = setupSections(setup);
  const sections = Object.fromEntries(SETUP_SECTIONS.map((name) => [name, short(values[name])])) as Record<
    SetupSection,
    string
  >;
  return { fingerprint: short(sections), sections };
}

export interface SetupComparison {
  matches: boolean;
  changedSections: SetupSection[];
}

/** Which sections differ, in the fixed section order. */
export function compareSetups(a: SetupFingerprint, b: SetupFingerprint): SetupComparison {
  const changedSections = SETUP_SECTIONS.filter((name) => a.sections[name] !== b.sections[name]);
  return { matches: changedSections.length === 0, changedSections };
}
