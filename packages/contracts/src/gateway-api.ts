import { z } from "zod";
import { Agent, Environment, Page, Session } from "./api";
import { Id, Timestamp } from "./ids";

/**
 * API bodies the gateway serves beyond api.ts: API keys, list queries and pages, agent versions and
 * traces. Lists are newest first; `after_id` continues after that item in list order.
 */

// ---- API keys ---------------------------------------------------------------------------------

export const ApiKeyRole = z.enum(["owner", "member"]);
export type ApiKeyRole = z.infer<typeof ApiKeyRole>;

export const CreateApiKeyRequest = z.strictObject({
  name: z.string().min(1).max(200),
  role: ApiKeyRole.default("member"),
});
export type CreateApiKeyRequest = z.input<typeof CreateApiKeyRequest>;

/** A key as listed: never the secret, only the prefix that identifies it to a person. */
export const ApiKey = z.object({
  id: Id,
  name: z.string(),
  role: ApiKeyRole,
  key_prefix: z.string(),
  created_at: Timestamp,
  revoked_at: Timestamp.nullable(),
});
export type ApiKey = z.infer<typeof ApiKey>;

/** Returned once, when the key is made: `key` is the secret and is not stored anywhere. */
export const CreatedApiKey = ApiKey.extend({ key: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

// ---- lists ------------------------------------------------------------------------------------

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  after_id: Id.optional(),
  include_archived: z.stringbool().default(false),
});
export type ListQuery = z.infer<typeof ListQuery>;

export const AgentPage = Page(Agent);
export const EnvironmentPage = Page(Environment);
export const SessionPage = Page(Session);
export const ApiKeyPage = Page(ApiKey);

// ---- agent versions ---------------------------------------------------------------------------

export const GetAgentQuery = z.object({ version: z.coerce.number().int().positive().optional() });

export const ListAgentVersionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  after_version: z.coerce.number().int().nonnegative().default(0),
});

/** Oldest version first. */
export const AgentVersionPage = z.object({
  data: z.array(Agent),
  next_after_version: z.number().int().positive().nullable(),
});

/**
 * Rolls an agent back: the spec of `version` becomes a new latest version. Sessions keep the version
 * they run unless `apply_to_sessions` moves every unfinished session of the agent onto it (from each
 * one's next wake), e.g. to undo an edit an agent made to its own prompt.
 */
export const RollbackAgentRequest = z.strictObject({
  version: z.number().int().positive(),
  apply_to_sessions: z.boolean().default(false),
});
export type RollbackAgentRequest = z.infer<typeof RollbackAgentRequest>;

/** Two versions to compare; `to` defaults to the latest, `from` to the version before `to`. */
export const AgentVersionDiffQuery = z.object({
  from: z.coerce.number().int().positive().optional(),
  to: z.coerce.number().int().positive().optional(),
});

export const AgentVersionDiff = z.object({
  agent_id: Id,
  from: z.number().int().positive(),
  to: z.number().int().positive(),
  /** Unified diff of the system prompt (empty when it did not change). */
  system_diff: z.string(),
  /** The other top-level spec fields that differ, with both values. */
  changes: z.array(z.object({ field: z.string(), from: z.unknown(), to: z.unknown() })),
});
export type AgentVersionDiff = z.infer<typeof AgentVersionDiff>;

// ---- event stream ---------------------------------------------------------------------------

/** Where a stream starts when no `Last-Event-ID` header says so (a reconnect sends one). */
export const StreamEventsQuery = z.object({
  after_seq: z.coerce.number().int().nonnegative().default(0),
  /** `true` interleaves the model's live deltas (`agent.message_delta`, …; never stored) with the events. */
  deltas: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
});

// ---- traces -----------------------------------------------------------------------------------

export const TraceQuery = z.object({
  wake_id: Id.optional(),
  /** Without `wake_id`: the most recent wakes of the session, at most this many. */
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const TraceSpanView = z.object({
  trace_id: z.string(),
  span_id: z.string(),
  parent_span_id: z.string().nullable(),
  name: z.string(),
  kind: z.string(),
  service_name: z.string(),
  wake_id: z.string().nullable(),
  start_time: Timestamp,
  end_time: Timestamp,
  duration_ms: z.number().nonnegative(),
  status: z.object({ code: z.enum(["unset", "ok", "error"]), message: z.string().nullable() }),
  attributes: z.record(z.string(), z.unknown()),
  events: z.array(
    z.object({ name: z.string(), time: z.string(), attributes: z.record(z.string(), z.unknown()) }),
  ),
  get children() {
    return z.array(TraceSpanView);
  },
});
export type TraceSpanView = z.infer<typeof TraceSpanView>;

/** Each wake's span trees (a wake re-run after a crash may have several traces), oldest wake first. */
export const TraceResponse = z.object({
  data: z.array(z.object({ wake_id: Id, spans: z.array(TraceSpanView) })),
});
export type TraceResponse = z.infer<typeof TraceResponse>;
