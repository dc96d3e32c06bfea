import { z } from "zod";

/** Provider-safe tool name: every provider accepts this shape. */
export const ToolName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "tool names match ^[a-z][a-z0-9_]{0,63}$");
export type ToolName = z.infer<typeof ToolName>;

export const JsonSchemaObject = z.record(z.string(), z.unknown());
export type JsonSchemaObject = z.infer<typeof JsonSchemaObject>;

export const PermissionPolicy = z.enum(["always_allow", "always_ask"]);
export type PermissionPolicy = z.infer<typeof PermissionPolicy>;

export const ToolOwnership = z.enum(["managed", "mcp", "custom", "agent"]);
export type ToolOwnership = z.infer<typeof ToolOwnership>;

/** `web`: outbound HTTP from the worker through the egress guard (fetch, search), never inside a transaction. */
export const ToolExecutor = z.enum(["inline", "sandbox", "memory", "orchestrator", "client", "mcp", "web"]);
export type ToolExecutor = z.infer<typeof ToolExecutor>;

export const ToolEffect = z.enum([
  "read",
  "write",
  "execute",
  "network",
  "state",
  "spawn",
  "schedule",
  "ask",
]);
export type ToolEffect = z.infer<typeof ToolEffect>;

/** Runtime facts a tool may need before it is offered to the model. */
export const AvailabilityFact = z.enum([
  "sandbox.ready",
  /** The session's environment image carries a browser (one of the platform's browser images). */
  "sandbox.browser",
  "session.is_child",
  "session.is_root",
  "memory.ready",
  "web.search",
]);
export type AvailabilityFact = z.infer<typeof AvailabilityFact>;

export const ToolDefinition = z.object({
  name: ToolName,
  description: z.string().min(1).max(10_000),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.optional(),
  ownership: ToolOwnership,
  permissionPolicy: PermissionPolicy,
  effects: z.array(ToolEffect),
  readOnly: z.boolean(),
  destructive: z.boolean(),
  idempotent: z.boolean(),
  interruptBehavior: z.enum(["cancel", "block"]),
  group: z.string().min(1),
  parallelism: z.object({
    parallelSafe: z.boolean(),
    /** Calls that share a resolved key run serially; `{field}` placeholders read the call's input. */
    resourceKey: z.string().optional(),
  }),
  availability: z.array(AvailabilityFact),
  ownerOnly: z.boolean(),
  /** Set when the call pauses the session until something outside the wake answers it. */
  pauses: z.enum(["ask_user", "wait_for_sessions", "run_child", "client_result"]).optional(),
  executor: ToolExecutor,
  mcpServerName: z.string().optional(),
  /** The tool's own name on its MCP server (the registry name is namespaced and provider-safe). */
  mcpToolName: z.string().optional(),
  /**
   * The setting `permissionPolicy` came from, in words, when it is not the tool's own default: an MCP
   * server's `configs["echo"].permission_policy`, `default_config.permission_policy` or `permission_policy`.
   */
  permissionSetting: z.string().optional(),
});
export type ToolDefinition = z.infer<typeof ToolDefinition>;

export const ModelProvider = z.enum(["anthropic", "openai", "gemini"]);
export type ModelProvider = z.infer<typeof ModelProvider>;

export const ToolProfile = z.enum(["minimal", "coding", "messaging", "full"]);
export type ToolProfile = z.infer<typeof ToolProfile>;

/** Names may be tool names, `group:<name>` or `*` wildcards (`shell_*`). */
export const ToolSelector = z
  .string()
  .regex(/^(group:[a-z_]+|[a-z0-9_*]+)$/, "a tool name, group:<name> or a * pattern");

export const AllowDeny = z.strictObject({
  allow: z.array(ToolSelector).optional(),
  also_allow: z.array(ToolSelector).optional(),
  deny: z.array(ToolSelector).optional(),
});
export type AllowDeny = z.infer<typeof AllowDeny>;

/**
 * Which reference's names the model sees for a tool that several references name (one implementation):
 * `personal_agent` offers `spawn_session`, `openboa` `session_delegate`, `openclaw` `sessions_spawn`.
 */
export const ToolNames = z.enum(["personal_agent", "openboa", "openclaw"]);
export type ToolNames = z.infer<typeof ToolNames>;

export const ToolPolicy = AllowDeny.extend({
  profile: ToolProfile.optional(),
  /** The naming profile; agent and platform policies only (default `personal_agent`). */
  tool_names: ToolNames.optional(),
  by_provider: z
    .partialRecord(
      ModelProvider,
      AllowDeny.extend({ profile: ToolProfile.optional(), tool_names: ToolNames.optional() }),
    )
    .optional(),
});
export type ToolPolicy = z.infer<typeof ToolPolicy>;

export const LoopDetectionConfig = z.strictObject({
  enabled: z.boolean().default(true),
  window: z.number().int().min(5).max(200).default(30),
  warn_at: z.number().int().positive().default(10),
  block_at: z.number().int().positive().default(20),
  stop_at: z.number().int().positive().default(30),
});
export type LoopDetectionConfig = z.infer<typeof LoopDetectionConfig>;
