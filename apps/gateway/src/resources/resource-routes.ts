import { ResourcePath } from "@wakeloop/contracts";
import {
  listSubstrateFiles,
  listSubstrateVersions,
  readSubstrateVersion,
  restoreSubstrateVersion,
} from "@wakeloop/db";
import { announceSubstrateChange } from "@wakeloop/sandbox-client";
import { z } from "zod";
import { findAgent } from "../agents/agent-store";
import type { Principal } from "../auth/principal";
import type { RouteDeps } from "../gateway-deps";
import { notFound } from "../http/api-error";
import { parseInput } from "../http/parse-input";
import { defineRoute, type Route } from "../http/route";

// The agent's versioned substrate (/workspace/agent) for people (issue #10): list its files, read
// their versions, and roll a file back. A restore is a new version authored by the API key, under the
// same limits and optimistic concurrency as the agent's promotions; runners holding the agent's
// sandboxes are told at once, so /workspace/agent shows it without waiting for their next wake.

// `path` is checked in the handler, after the agent: another tenant's agent is a 404 whatever else the
// request gets wrong.
const VersionsQuery = z.strictObject({
  path: z.string().optional().describe("The substrate file, relative to /workspace/agent (required)"),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export function resourceRoutes({ db, bus, config }: RouteDeps): Route[] {
  const limits = config.substrateLimits;
  /** The agent must be the tenant's: another tenant's agent id is a 404, never an empty substrate. */
  const scopeOf = async (principal: Principal, agentId: string) => {
    await findAgent(db, principal.tenantId, agentId);
    return { tenantId: principal.tenantId, agentId };
  };
  return [
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/resources",
      operationId: "listResources",
      summary: "The agent's substrate files (/workspace/agent) with their latest versions and total size",
      tag: "resources",
      access: "member",
      response: { status: 200, body: "SubstrateFileList", description: "The files, by path" },
      handler: async ({ principal, params }) => {
        const files = await listSubstrateFiles(db, await scopeOf(principal, params.id));
        return {
          data: files,
          total_bytes: files.reduce((sum, file) => sum + file.size_bytes, 0),
          max_agent_bytes: limits.maxAgentBytes,
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/resources/versions",
      operationId: "listResourceVersions",
      summary: "A substrate file's immutable versions, newest first, with author, time and content hash",
      tag: "resources",
      access: "member",
      query: VersionsQuery,
      response: { status: 200, body: "SubstrateVersionList", description: "The versions" },
      handler: async ({ principal, params, query }) => {
        const scope = await scopeOf(principal, params.id);
        const path = parseInput(ResourcePath, query.path, "path");
        return { data: await listSubstrateVersions(db, scope, path, { limit: query.limit }) };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/resources/versions/{version_id}",
      operationId: "getResourceVersion",
      summary: "One version of a substrate file, with its content",
      tag: "resources",
      access: "member",
      response: { status: 200, body: "SubstrateVersionWithContent", description: "The version" },
      handler: async ({ principal, params }) => {
        const version = await readSubstrateVersion(
          db,
          await scopeOf(principal, params.id),
          params.version_id,
        );
        if (version === null) throw notFound("substrate version", params.version_id);
        return version;
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/agents/{id}/resources/restore",
      operationId: "restoreResourceVersion",
      summary:
        "Roll a substrate file back: the version's content becomes its new latest version (409 on a stale expected_version_id)",
      tag: "resources",
      access: "member",
      body: "RestoreResourceRequest",
      response: { status: 200, body: "SubstrateVersion", description: "The version written" },
      handler: async ({ principal, params, body }) => {
        const scope = await scopeOf(principal, params.id);
        const { version } = await restoreSubstrateVersion(
          db,
          scope,
          {
            versionId: body.version_id,
            ...(body.expected_version_id !== undefined && { expectedVersionId: body.expected_version_id }),
            author: {
              kind: "api",
              session_id: null,
              wake_id: null,
              tool_call_id: null,
              api_key_id: principal.keyId,
            },
          },
          limits,
        );
        announceSubstrateChange(bus, scope);
        return version;
      },
    }),
  ];
}
