import type { AgentTool, ToolPolicy } from "@wakeloop/contracts";
import type { PolicyContext } from "./policy-pipeline";
import { agentToolRegistry } from "./registry";
import type { RuntimeFacts } from "./runtime-gating";

/** Test helper: a root session of an owner, on Anthropic, with empty policies unless overridden. */
export function policyContext(
  overrides: Partial<Omit<PolicyContext, "agent" | "registry">> & {
    agentPolicy?: ToolPolicy;
    agentTools?: AgentTool[];
  } = {},
): PolicyContext {
  const { agentPolicy, agentTools, ...rest } = overrides;
  const agent = { tool_policy: agentPolicy ?? {}, tools: agentTools ?? [] };
  return {
    registry: agentToolRegistry(agent),
    globalPolicy: {},
    agent,
    environmentPolicy: null,
    provider: "anthropic",
    subSessionDepth: 0,
    maxSubSessionDepth: 2,
    subSessionChildren: 0,
    maxSubSessionChildren: 10,
    isOwner: true,
    ...rest,
  };
}

const baseImage = { name: "wakeloop-sandbox:bookworm", browser: false };
export const sandboxReady: RuntimeFacts = {
  sandboxStatus: "ready",
  memoryReady: true,
  webSearch: true,
  sandboxImage: baseImage,
};
export const noSandbox: RuntimeFacts = {
  sandboxStatus: null,
  memoryReady: true,
  webSearch: true,
  sandboxImage: baseImage,
};
/** A ready sandbox on a browser image: the browser tools are offered too. */
export const browserSandboxReady: RuntimeFacts = {
  ...sandboxReady,
  sandboxImage: { name: "wakeloop-sandbox-browser:bookworm", browser: true },
};
