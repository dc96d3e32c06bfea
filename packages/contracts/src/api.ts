import { z } from "zod";
import { MicroUsd } from "./cost";
import { SessionEvent, StopReason, TerminationReason, UserEventInput } from "./events";
import { Id, Metadata, Timestamp } from "./ids";
import { McpServers } from "./mcp";
import { DefinedOutcome, PendingAction, SessionStatus } from "./session-state";
import { JsonSchemaObject, LoopDetectionConfig, PermissionPolicy, ToolName, ToolPolicy } from "./tools";
import { Budget, TokenUsage } from "./usage";

// ---- agents -----------------------------------------------------------------------------------

export const ModelConfig = z.strictObject({
  provider: z.enum(["anthropic", "openai", "openai_compatible"]),
  id: z.string().min(1).max(200),
  /** For OpenAI-compatible servers (vLLM, Ollama, llama.cpp) and local fakes. */
  base_url: z.url().optional(),
  max_output_tokens: z.number().int().positive().max(200_000).default(4_096),
  context_window_tokens: z.number().int().positive().default(200_000),
});
export type ModelConfig = z.infer<typeof ModelConfig>;

/** Another model of the agent's provider that a session runs (`spawn_session`, a scheduled task). */
export const SessionModel = z.string().min(1).max(200);

export const BuiltinToolset = z.strictObject({
  type: z.literal("builtin"),
  default_permission_policy: PermissionPolicy.optional(),
  configs: z
    .array(
      z.strictObject({
        name: ToolName,
        enabled: z.boolean().optional(),
        permission_policy: PermissionPolicy.optional(),
      }),
    )
    .default([]),
});
export const CustomToolSpec = z.strictObject({
  type: z.literal("custom"),
  name: ToolName,
  description: z.string().min(1).max(10_000),
  input_schema: JsonSchemaObject,
});
export const AgentTool = z.discriminatedUnion("type", [BuiltinToolset, CustomToolSpec]);
export type AgentTool = z.infer<typeof AgentTool>;

/**
 * When and how a long session's older history is compacted (docs/context-management.md). Absent: off,
 * and a history past the model's window loses its oldest turns from requests (the events stay).
 */
export const ContextManagement = z.strictObject({
  /** A request estimated past this many tokens (system, tools and history) compacts first. */
  threshold_tokens: z.number().int().min(1_000).max(2_000_000),
  /** The newest history kept as it is (at turn boundaries, so a call keeps its result); the rest is compacted. */
  keep_recent_tokens: z.number().int().min(0).max(2_000_000).default(8_000),
  /**
   * Who writes the summary: the agent's own model, or the model the operator maps to that
   * `llm_generate` intelligence level (`LLM_MODEL_LOW`…; the agent's when none is), at the agent's provider.
   */
  summary_model: z.enum(["agent", "low", "medium", "high"]).default("agent"),
  /**
   * First clear the results of older tool calls (each replaced by a stub naming the tool and its
   * size); summarise only when that is not enough.
   */
  clear_tool_results: z.boolean().default(true),
});
export type ContextManagement = z.infer<typeof ContextManagement>;

export const AgentSpec = z.strictObject({
  name: z.string().min(1).max(200),
  model: ModelConfig,
  system: z.string().max(200_000).default(""),
  tools: z.array(AgentTool).max(200).default([]),
  /** MCP servers whose tools the agent is offered (`mcp__<server>__<tool>`, docs/mcp.md). */
  mcp_servers: McpServers.default([]),
  tool_policy: ToolPolicy.default({}),
  budget: Budget.default({ max_total_tokens: null }),
  loop_detection: LoopDetectionConfig.default(LoopDetectionConfig.parse({})),
  context_management: ContextManagement.optional(),
  metadata: Metadata.default({}),
});
export type AgentSpec = z.infer<typeof AgentSpec>;

export const CreateAgentRequest = AgentSpec;
export type CreateAgentRequest = z.input<typeof CreateAgentRequest>;
/** An update replaces the spec and makes a new version; sessions keep the version they started with. */
export const UpdateAgentRequest = AgentSpec.partial();
export type UpdateAgentRequest = z.input<typeof UpdateAgentRequest>;

export const Agent = AgentSpec.extend({
  id: Id,
  version: z.number().int().positive(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Agent = z.infer<typeof Agent>;

// ---- environments -----------------------------------------------------------------------------

export const EnvironmentConfig = z.strictObject({
  image: z.string().min(1).default("wakeloop-sandbox:bookworm"),
  cpus: z.number().positive().max(64).default(1),
  memory_mb: z.number().int().min(32).max(65_536).default(512),
  pids_limit: z.number().int().min(16).max(100_000).default(256),
  network: z.enum(["none", "bridge"]).default("none"),
  workspace_access: z.enum(["rw", "ro"]).default("rw"),
  exec_security: z.enum(["deny", "allowlist", "full"]).default("full"),
  exec_ask: z.enum(["off", "on-miss", "always"]).default("on-miss"),
  exec_allowlist: z.array(z.string().min(1)).default([]),
  command_timeout_ms: z.number().int().min(100).max(3_600_000).default(120_000),
  warm_pool_size: z.number().int().min(0).max(64).default(0),
  /** Size of the session's `/workspace` filesystem; writes past it fail with "no space left". */
  workspace_mb: z.number().int().min(16).max(1_048_576).default(1_024),
});
export type EnvironmentConfig = z.infer<typeof EnvironmentConfig>;

export const EnvironmentSpec = z.strictObject({
  name: z.string().min(1).max(200),
  config: EnvironmentConfig.default(EnvironmentConfig.parse({})),
  /** MCP servers every session in this environment is offered, besides its agent's (names distinct). */
  mcp_servers: McpServers.default([]),
  tool_policy: ToolPolicy.default({}),
  metadata: Metadata.default({}),
});
export type EnvironmentSpec = z.infer<typeof EnvironmentSpec>;
export const CreateEnvironmentRequest = EnvironmentSpec;
export type CreateEnvironmentRequest = z.input<typeof CreateEnvironmentRequest>;
export const UpdateEnvironmentRequest = EnvironmentSpec.partial();
export const Environment = EnvironmentSpec.extend({ id: Id, created_at: Timestamp, updated_at: Timestamp });
export type Environment = z.infer<typeof Environment>;

// ---- sessions ---------------------------------------------------------------------------------

export const CreateSessionRequest = z.strictObject({
  agent: z.union([Id, z.strictObject({ id: Id, version: z.number().int().positive().optional() })]),
  environment_id: Id.optional(),
  title: z.string().max(500).optional(),
  metadata: Metadata.default({}),
  budget: Budget.optional(),
});
export type CreateSessionRequest = z.input<typeof CreateSessionRequest>;

export const UpdateSessionRequest = z
  .strictObject({ title: z.string().max(500).nullable(), metadata: Metadata, budget: Budget })
  .partial()
  .refine((body) => Object.keys(body).length > 0, "give at least one of title, metadata, budget");
export type UpdateSessionRequest = z.input<typeof UpdateSessionRequest>;

export const Session = z.object({
  id: Id,
  agent: z.object({ id: Id, version: z.number().int().positive() }),
  environment_id: Id.nullable(),
  parent_session_id: Id.nullable(),
  /** The model this session runs instead of its agent version's (`spawn_session(model)`, a scheduled task's `model`); null for the agent's. */
  model: z.string().nullable().default(null),
  status: SessionStatus,
  stop_reason: StopReason.nullable(),
  termination_reason: TerminationReason.nullable(),
  title: z.string().nullable(),
  metadata: Metadata,
  usage: TokenUsage,
  /** What the session's model requests cost so far in micro-USD, at the operator's prices; null when unknown. */
  cost_micro_usd: MicroUsd.nullable().default(null),
  budget: Budget,
  /** Tokens given to sub-sessions (held for running ones, spent by finished ones); they count against `budget`. */
  delegated_tokens: z.number().int().nonnegative().default(0),
  /** The latest outcome a person defined with `user.define_outcome`; null when none was. */
  defined_outcome: DefinedOutcome.nullable().default(null),
  last_seq: z.number().int().nonnegative(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Session = z.infer<typeof Session>;

export const ListSessionsQuery = z.object({
  status: SessionStatus.optional(),
  agent_id: Id.optional(),
  parent_session_id: Id.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  after_id: Id.optional(),
});
export type ListSessionsQuery = z.infer<typeof ListSessionsQuery>;

// ---- events -----------------------------------------------------------------------------------

export const MAX_EVENTS_PER_REQUEST = 100;

export const PostEventsRequest = z.strictObject({
  events: z.array(UserEventInput).min(1).max(MAX_EVENTS_PER_REQUEST),
});
export type PostEventsRequest = z.infer<typeof PostEventsRequest>;

export const PostEventsResponse = z.object({ events: z.array(SessionEvent) });

export const ListEventsQuery = z.object({
  after_seq: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
});

export const ListEventsResponse = z.object({
  data: z.array(SessionEvent),
  next_after_seq: z.number().int().nonnegative().nullable(),
});

/** An open action; `session_id` is set on those of a sub-session, which can be answered here or there. */
export const PendingItem = PendingAction.extend({ session_id: Id.optional() });
export type PendingItem = z.infer<typeof PendingItem>;
export const PendingResponse = z.object({ data: z.array(PendingItem) });

export const Page = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), next_after_id: Id.nullable() });
