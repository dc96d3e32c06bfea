import type { AgentSpec, SandboxStatusValue, ToolPolicy } from "@wakeloop/contracts";
import type { EffectiveToolSet } from "./effective-tool-set";
import { computeEffectiveTools, toolProviderOf } from "./effective-tools";
import { agentToolRegistry } from "./registry";

/** The platform-wide tool settings every service that computes a session's tools must share. */
export interface PlatformToolSettings {
  globalToolPolicy: ToolPolicy;
  maxSubSessionDepth: number;
}

/** What of a session decides its tools: its pinned agent, its environment, its place and its sandbox. */
export interface SessionToolInputs {
  agent: Pick<AgentSpec, "model" | "tools" | "tool_policy">;
  environmentPolicy: ToolPolicy | null;
  parentSessionId: string | null;
  sandboxStatus: SandboxStatusValue | null;
}

/**
 * A session's effective tools for its next turn, the one way every service computes them (the harness
 * before each model request and at execution, the gateway's `/tools`), so what the API explains is what
 * the model gets. Memory is not tracked as a runtime fact yet, so memory tools stay gated out.
 */
export function sessionEffectiveTools(
  session: SessionToolInputs,
  settings: PlatformToolSettings,
): EffectiveToolSet {
  return computeEffectiveTools(
    {
      registry: agentToolRegistry(session.agent),
      globalPolicy: settings.globalToolPolicy,
      agent: session.agent,
      environmentPolicy: session.environmentPolicy,
      provider: toolProviderOf(session.agent.model),
      subSessionDepth: session.parentSessionId === null ? 0 : 1,
      maxSubSessionDepth: settings.maxSubSessionDepth,
      isOwner: true,
    },
    { sandboxStatus: session.sandboxStatus, memoryReady: false },
  );
}
