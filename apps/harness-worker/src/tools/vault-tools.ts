import { mcpServerSecrets } from "@wakeloop/contracts";
import { listVaultSecrets } from "@wakeloop/provider-credentials";
import { sessionMcpServers } from "@wakeloop/tool-runtime";
import type { ToolContext } from "./tool-context";
import { jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * `vault_list`: the vault's secret names (never values), which of the session's MCP servers reference
 * each, the references the vault cannot satisfy, and each server's state at the last listing.
 */
export async function runVaultList(ctx: ToolContext): Promise<ToolOutcome> {
  const { view } = ctx;
  const secrets = await listVaultSecrets(ctx.db, view.tenantId);
  const { servers } = sessionMcpServers(view.agent.mcp_servers, view.environment?.spec.mcp_servers ?? []);
  const usedBy = (secret: string) =>
    servers
      .filter((server) => mcpServerSecrets(server).some((ref) => ref.secret === secret))
      .map((server) => server.name);
  const stored = new Set(secrets.map((secret) => secret.name));
  return jsonOutcome({
    secrets: secrets.map((secret) => ({
      name: secret.name,
      used_by: usedBy(secret.name),
      updated_at: secret.updated_at,
    })),
    missing: servers.flatMap((server) =>
      mcpServerSecrets(server)
        .filter((ref) => !stored.has(ref.secret))
        .map((ref) => ({ server: server.name, secret: ref.secret })),
    ),
    servers: servers.map((server) => {
      const listing = view.state.mcp_servers.find((entry) => entry.name === server.name);
      return {
        name: server.name,
        status: listing?.status ?? "not_listed",
        ...(listing?.status === "ready" && { tools: listing.tools.length }),
        ...(listing?.status === "unreachable" && { reason: listing.reason }),
      };
    }),
  });
}
