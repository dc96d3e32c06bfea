import { z } from "zod";
import { Timestamp } from "./ids";
import { JsonSchemaObject, PermissionPolicy } from "./tools";

// MCP toolsets (issue #12): the servers an agent or environment attaches, what the worker listed from
// them, and the tenant's vault that holds their credentials. See docs/mcp.md.

/**
 * A server's name is part of each of its tools' names (`mcp__<server>__<tool>`), so it is provider-safe
 * and never holds `__`, which separates the parts.
 */
export const McpServerName = z
  .string()
  .regex(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/, "MCP server names match ^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
  .max(24);
export type McpServerName = z.infer<typeof McpServerName>;

/** A vault secret's name: what specs reference and `vault_list` shows (never its value). */
export const VaultSecretName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, "vault secret names match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$");
export type VaultSecretName = z.infer<typeof VaultSecretName>;

/** A value read from the tenant's vault when the worker connects: `prefix` + the secret. */
export const VaultSecretRef = z.strictObject({
  secret: VaultSecretName,
  /** Put before the value, e.g. `"Bearer "` for an Authorization header. */
  prefix: z.string().max(64).optional(),
});
export type VaultSecretRef = z.infer<typeof VaultSecretRef>;

const HeaderName = z.string().regex(/^[A-Za-z0-9-]{1,100}$/, "header names are letters, digits and -");
const CLIENT_HEADERS = new Set([
  "host",
  "content-length",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
]);

/** Headers sent with every request to the server, each value from the vault. */
const McpHeaders = z.record(HeaderName, VaultSecretRef).superRefine((headers, ctx) => {
  for (const name of Object.keys(headers)) {
    if (CLIENT_HEADERS.has(name.toLowerCase())) {
      ctx.addIssue({ code: "custom", path: [name], message: "this header is set by the HTTP client" });
    }
  }
});

/** Registry names of MCP tools start with this (`mcp__<server>__<tool>`); no other tool may. */
export const MCP_TOOL_PREFIX = "mcp__";

/**
 * A tool as the server lists it (`find`, not `mcp__crm__find`): settings name the server's own tools,
 * like the hosted API's `mcp_toolset` configs.
 */
const McpConfiguredToolName = z
  .string()
  .regex(/^\S{1,200}$/, "1 to 200 characters, no spaces")
  .refine((name) => !name.startsWith(MCP_TOOL_PREFIX), {
    message: "name the tool as the server lists it (find), not by its registry name (mcp__<server>__find)",
  });

/** One tool's settings; what it leaves out comes from the server's `default_config`. */
export const McpToolConfig = z.strictObject({
  name: McpConfiguredToolName,
  enabled: z.boolean().optional(),
  permission_policy: PermissionPolicy.optional(),
});
export type McpToolConfig = z.infer<typeof McpToolConfig>;

/** What every tool of the server gets unless its own config says otherwise. */
export const McpToolDefaults = z.strictObject({
  enabled: z.boolean().default(true),
  permission_policy: PermissionPolicy.optional(),
});
export type McpToolDefaults = z.infer<typeof McpToolDefaults>;

/**
 * Per-tool settings in the shape of the hosted API's `mcp_toolset` (`default_config`, `configs`), the
 * same for every transport. The server-level `permission_policy` of earlier specs stays the default
 * policy; giving it and `default_config.permission_policy` with different values is refused.
 */
const mcpToolSettings = {
  permission_policy: PermissionPolicy.optional(),
  default_config: McpToolDefaults.default({ enabled: true }),
  configs: z.array(McpToolConfig).max(500).default([]),
};

function checkToolSettings(
  server: { permission_policy?: PermissionPolicy; default_config: McpToolDefaults; configs: McpToolConfig[] },
  ctx: z.RefinementCtx,
): void {
  const fallback = server.default_config.permission_policy;
  if (
    server.permission_policy !== undefined &&
    fallback !== undefined &&
    fallback !== server.permission_policy
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["default_config", "permission_policy"],
      message: `differs from the server's permission_policy (${server.permission_policy}); set the default policy once`,
    });
  }
  const seen = new Set<string>();
  server.configs.forEach((config, index) => {
    if (seen.has(config.name)) {
      ctx.addIssue({
        code: "custom",
        path: ["configs", index, "name"],
        message: `the tool "${config.name}" is configured twice; one config per tool`,
      });
    }
    seen.add(config.name);
  });
}

/** One tool call, from request to result; listing the tools has its own platform limit. */
const callTimeoutMs = z.number().int().min(100).max(600_000).default(60_000);

/**
 * An MCP server over streamable HTTP, reached by the harness worker through the egress guard. Header
 * values come only from the vault, so a spec (stored, versioned, shown by the API) never holds a secret.
 */
export const McpUrlServerSpec = z
  .strictObject({
    type: z.literal("url"),
    name: McpServerName,
    url: z.url({ protocol: /^https?$/, error: "an http(s) URL" }),
    headers: McpHeaders.default({}),
    ...mcpToolSettings,
    call_timeout_ms: callTimeoutMs,
  })
  .superRefine(checkToolSettings);
export type McpUrlServerSpec = z.infer<typeof McpUrlServerSpec>;

const noNul = (value: string) => !value.includes("\0");
const EnvName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "environment variable names are shell names");

/**
 * An MCP server over stdio, run inside the session's sandbox as its own uid (1001): `command` (found on
 * the image's PATH, or a path) with `args`, its stdin/stdout carrying newline-delimited JSON-RPC.
 * Environment values come only from the vault, like HTTP headers.
 */
export const McpStdioServerSpec = z
  .strictObject({
    type: z.literal("stdio"),
    name: McpServerName,
    command: z.string().min(1).max(1_024).refine(noNul, "a command holds no NUL character"),
    args: z
      .array(z.string().max(4_096).refine(noNul, "an argument holds no NUL character"))
      .max(64)
      .default([]),
    env: z.record(EnvName, VaultSecretRef).default({}),
    ...mcpToolSettings,
    call_timeout_ms: callTimeoutMs,
  })
  .superRefine(checkToolSettings);
export type McpStdioServerSpec = z.infer<typeof McpStdioServerSpec>;

/** An attached MCP server: over streamable HTTP (`url`) or over stdio in the sandbox (`stdio`). */
export const McpServerSpec = z.discriminatedUnion("type", [McpUrlServerSpec, McpStdioServerSpec]);
export type McpServerSpec = z.infer<typeof McpServerSpec>;

/** The vault references of a server: what connecting to it opens, and what `vault_list` reports. */
export function mcpServerSecrets(server: McpServerSpec): VaultSecretRef[] {
  return Object.values(server.type === "url" ? server.headers : server.env);
}

/** The servers of an agent or an environment: names unique, so tool names are. */
export const McpServers = z
  .array(McpServerSpec)
  .max(20)
  .superRefine((servers, ctx) => {
    const seen = new Set<string>();
    servers.forEach((server, index) => {
      if (seen.has(server.name)) {
        ctx.addIssue({
          code: "custom",
          path: [index, "name"],
          message: `two MCP servers are named "${server.name}"; names must be unique`,
        });
      }
      seen.add(server.name);
    });
  });

/** One tool as the server listed it (its own name, not yet namespaced). */
export const McpListedTool = z.object({
  name: z.string().min(1).max(200),
  description: z.string().max(10_000).optional(),
  input_schema: JsonSchemaObject,
  /** The server's annotations (hints, not guarantees: they only ever relax what we assume). */
  read_only: z.boolean().optional(),
  destructive: z.boolean().optional(),
  idempotent: z.boolean().optional(),
});
export type McpListedTool = z.infer<typeof McpListedTool>;

/** What the worker found when it listed a server's tools at the start of a wake. */
export const McpServerListing = z.discriminatedUnion("status", [
  z.object({ name: McpServerName, status: z.literal("ready"), tools: z.array(McpListedTool) }),
  z.object({ name: McpServerName, status: z.literal("unreachable"), reason: z.string().max(2_000) }),
]);
export type McpServerListing = z.infer<typeof McpServerListing>;

// ---- vault ------------------------------------------------------------------------------------

/** Write-only: the API stores the value encrypted and answers with this metadata only. */
export const PutVaultSecretRequest = z.strictObject({ value: z.string().min(1).max(8_192) });
export type PutVaultSecretRequest = z.input<typeof PutVaultSecretRequest>;

export const VaultSecret = z.object({ name: VaultSecretName, created_at: Timestamp, updated_at: Timestamp });
export type VaultSecret = z.infer<typeof VaultSecret>;

export const VaultSecretList = z.object({ data: z.array(VaultSecret) });
export type VaultSecretList = z.infer<typeof VaultSecretList>;
