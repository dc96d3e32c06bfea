import type { AgentTool, McpServerListing, McpServerSpec, ToolPolicy } from "@wakeloop/contracts";
import type { PolicyContext } from "./policy-pipeline";
import { agentToolRegistry } from "./registry";
import type { RuntimeFacts } from "./runtime-gating";
import type { PlatformToolSettings, SessionToolInputs } from "./session-tools";

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

/** Test helper: a root session without sandbox or memory whose agent has these MCP servers and policy. */
export function mcpSession(
  servers: McpServerSpec[],
  listings: McpServerListing[],
  toolPolicy: ToolPolicy = {},
): SessionToolInputs {
  return {
    agent: {
      model: { provider: "anthropic", id: "m", max_output_tokens: 1, context_window_tokens: 10 },
      tools: [],
      tool_policy: toolPolicy,
      mcp_servers: servers,
    },
    environmentPolicy: null,
    environmentMcpServers: [],
    mcpListings: listings,
    depth: 0,
    childCount: 0,
    sandboxStatus: null,
    sandboxImage: null,
    memoryReady: false,
    agentTools: [],
    revealedTools: [],
  };
}

export const platformSettings: PlatformToolSettings = {
  globalToolPolicy: {},
  maxSubSessionDepth: 2,
  webSearch: false,
  maxChildrenPerSession: 10,
  browserImages: [],
};
