import type { McpServerListing } from "@wakeloop/contracts";
import type { NewEvent } from "@wakeloop/db";
import { sessionMcpServers, stableStringify } from "@wakeloop/tool-runtime";
import type { SessionSpecs } from "../session/load-session";
import { type McpAccess, WakeMcpClients } from "../tools/mcp/mcp-clients";

/** The wake's MCP clients, or null when neither the agent nor the environment attaches a server. */
export function wakeMcpClients(
  access: McpAccess,
  tenantId: string,
  specs: SessionSpecs,
): WakeMcpClients | null {
  const { servers } = sessionMcpServers(specs.agent.mcp_servers, specs.environment?.spec.mcp_servers ?? []);
  return servers.length === 0 ? null : new WakeMcpClients(access, tenantId, servers);
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
