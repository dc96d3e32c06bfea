import { listAgentTools } from "@wakeloop/db";
import { createMemoryClient } from "@wakeloop/memory-client";
import { sessionEffectiveTools } from "@wakeloop/tool-runtime";
import { findAgent } from "../agents/agent-store";
import { findEnvironment } from "../environments/environment-store";
import type { RouteDeps } from "../gateway-deps";
import { defineRoute, type Route } from "../http/route";
import { requireSession } from "../sessions/session-store";

/**
 * "Why is this tool missing?" (DESIGN §5): the tools the session's next turn may call, which of them
 * its request offers and which wait for `tool_search` (each with why), and every exclusion with the
 * pipeline step that made it, computed as the harness computes them, from the session's pinned agent
 * version, its environment and its projection.
 */
export function toolsRoute({ db, bus, config }: RouteDeps): Route {
  // Memory tools are offered while the memory service answers, as the harness decides at wake start.
  const memory = createMemoryClient(bus);
  return defineRoute({
    method: "GET",
    path: "/v1/sessions/{id}/tools",
    operationId: "getSessionTools",
    summary: "The effective tools of the session's next turn, and why each other tool is excluded",
    tag: "sessions",
    access: "member",
    response: {
      status: 200,
      body: "SessionToolSet",
      description: "Callable tools, which of them are offered and deferred, and exclusions",
    },
    handler: async ({ principal, params }) => {
      const tenantId = principal.tenantId;
      const session = await requireSession(db, tenantId, params.id);
      const { agent } = await findAgent(db, tenantId, session.agent_id, session.agent_version);
      const environment =
        session.environment_id === null
          ? null
          : (await findEnvironment(db, tenantId, session.environment_id)).environment;
      return sessionEffectiveTools(
        {
          agent,
          environmentPolicy: environment?.tool_policy ?? null,
          environmentMcpServers: environment?.mcp_servers ?? [],
          mcpListings: session.state.mcp_servers,
          depth: session.depth,
          childCount: session.state.child_session_ids.length,
          sandboxStatus: session.state.sandbox_status,
          sandboxImage: environment?.config.image ?? null,
          memoryReady: await memory.ready(),
          // What the next wake will read at its start: the agent's tools as they are now.
          agentTools: await listAgentTools(db, { tenantId, agentId: session.agent_id }),
          revealedTools: session.state.revealed_tools,
        },
        config.tools,
      );
    },
  });
}
