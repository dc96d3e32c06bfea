import type { Bus } from "@wakeloop/bus";
import type { McpServerListing } from "@wakeloop/contracts";
import type { NewEvent } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import { sessionMcpServers, stableStringify } from "@wakeloop/tool-runtime";
import type { SessionSpecs } from "../session/load-session";
import { type McpAccess, type McpSandbox, WakeMcpClients } from "../tools/mcp/mcp-clients";

/** The session whose wake this is: its servers, and the sandbox its stdio servers run in. */
export interface WakeMcpSession {
  tenantId: string;
  sessionId: string;
  agentId: string;
  specs: SessionSpecs;
  sandbox: SandboxClient | null;
  bus: Pick<Bus, "nc" | "subjects">;
}

/** The wake's MCP clients, or null when neither the agent nor the environment attaches a server. */
export function wakeMcpClients(access: McpAccess, session: WakeMcpSession): WakeMcpClients | null {
  const { specs } = session;
  const { servers } = sessionMcpServers(specs.agent.mcp_servers, specs.environment?.spec.mcp_servers ?? []);
  if (servers.length === 0) return null;
  const sandbox: McpSandbox =
    session.sandbox === null
      ? { unavailable: "this platform runs no sandboxes (the worker's SANDBOX_ENABLED is off)" }
      : specs.environment === null
        ? { unavailable: "the session has no environment, so no sandbox" }
        : {
            client: session.sandbox,
            bus: session.bus,
            sessionId: session.sessionId,
            agentId: session.agentId,
            environment: specs.environment.spec.config,
          };
  return new WakeMcpClients(access, session.tenantId, servers, sandbox);
}

/**
 * The `mcp.tools_listed` event to commit with the wake's start, or null when the listing is what the
 * session already has: sessions whose servers did not change add no event per wake. Compared as stable
 * JSON, since the stored projection comes back from jsonb with its keys reordered.
 */
export function listingEvent(
  listed: readonly McpServerListing[],
  current: readonly McpServerListing[],
): NewEvent | null {
  if (stableStringify(listed) === stableStringify(current)) return null;
  return { type: "mcp.tools_listed", servers: [...listed] };
}
