import type {
  AgentSpec,
  McpServerListing,
  McpServerSpec,
  SandboxStatusValue,
  ToolPolicy,
} from "@wakeloop/contracts";
import { type AgentDefinedToolSpec, disabledAgentToolExclusion } from "./agent-defined-tools";
import { type EffectiveToolSet, sortExclusions } from "./effective-tool-set";
import { computeEffectiveTools, toolProviderOf } from "./effective-tools";
import { mcpToolDefinitions, sessionMcpServers } from "./mcp-tools";
import { agentToolRegistry } from "./registry";
import { offerTools, type SessionToolSet } from "./tool-offer";

/** The platform-wide tool settings every service that computes a session's tools must share. */
export interface PlatformToolSettings {
  globalToolPolicy: ToolPolicy;
  maxSubSessionDepth: number;
  /** A search backend is configured, so `web_search` can be offered. */
  webSearch: boolean;
  maxChildrenPerSession: number;
  /** Sandbox images that carry Chromium: the browser tools are offered on these alone. */
  browserImages: readonly string[];
}

/**
 * What of a session decides its tools: its pinned agent, its environment, its place, its sandbox,
 * whether the memory service answers, and the tools the agent wrote for itself.
 */
export interface SessionToolInputs {
  agent: Pick<AgentSpec, "model" | "tools" | "tool_policy" | "mcp_servers">;
  environmentPolicy: ToolPolicy | null;
  /** The environment's own MCP servers (none without an environment). */
  environmentMcpServers: readonly McpServerSpec[];
  /** The session's last `mcp.tools_listed` (`state.mcp_servers`). */
  mcpListings: readonly McpServerListing[];
  /** 0 for a root session, its parent's + 1 for a sub-session. */
  depth: number;
  /** Sub-sessions it has spawned (`state.child_session_ids`). */
  childCount: number;
  sandboxStatus: SandboxStatusValue | null;
  /** `environment.config.image`; null for a session without an environment. */
  sandboxImage: string | null;
  memoryReady: boolean;
  /** The agent's own tools as read at wake start; a disabled one is excluded with the reason. */
  agentTools: readonly AgentDefinedToolSpec[];
  /** The tools the session revealed, in reveal order (`state.revealed_tools`). */
  revealedTools: readonly string[];
}

/**
 * A session's effective tools for its next turn, the one way every service computes them (the harness
 * before each model request and at execution, the gateway's `/tools`), so what the API explains is what
 * the model gets: the tools it may call, and which of them the request offers and which are deferred.
 */
export function sessionEffectiveTools(
  session: SessionToolInputs,
  settings: PlatformToolSettings,
): SessionToolSet {
  const eager = { ...session.agent, provider: toolProviderOf(session.agent.model) };
  return offerTools(callableTools(session, settings), eager, session.revealedTools);
}

function callableTools(session: SessionToolInputs, settings: PlatformToolSettings): EffectiveToolSet {
  const enabled = session.agentTools.filter((tool) => tool.enabled);
  const attached = sessionMcpServers(session.agent.mcp_servers, session.environmentMcpServers);
  const mcp = mcpToolDefinitions(attached, session.mcpListings);
  const effective = computeEffectiveTools(
    {
      registry: agentToolRegistry(session.agent, { agentTools: enabled, mcpTools: mcp.tools }),
      globalPolicy: settings.globalToolPolicy,
      agent: session.agent,
      environmentPolicy: session.environmentPolicy,
      provider: toolProviderOf(session.agent.model),
      subSessionDepth: session.depth,
      maxSubSessionDepth: settings.maxSubSessionDepth,
      subSessionChildren: session.childCount,
      maxSubSessionChildren: settings.maxChildrenPerSession,
      isOwner: true,
    },
    {
      sandboxStatus: session.sandboxStatus,
      memoryReady: session.memoryReady,
      webSearch: settings.webSearch,
      sandboxImage:
        session.sandboxImage === null
          ? null
          : { name: session.sandboxImage, browser: settings.browserImages.includes(session.sandboxImage) },
    },
  );
  const disabled = session.agentTools.filter((tool) => !tool.enabled).map(disabledAgentToolExclusion);
  if (disabled.length === 0 && attached.excluded.length === 0 && mcp.excluded.length === 0) return effective;
  return {
    tools: effective.tools,
    excluded: sortExclusions([...effective.excluded, ...disabled, ...attached.excluded, ...mcp.excluded]),
  };
}
