import type { AgentCodeKind, EventType, SessionStatus, WakeReason } from "@wakeloop/contracts";
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

/**
 * The typed shape of every table (migrations in ./migrations create them). JSON columns select as
 * `unknown` on purpose: stored JSON is read back through a zod schema (invariant 8, see json-readers.ts)
 * and written as `JSON.stringify` text, which also keeps pg from turning JS arrays into Postgres arrays.
 */

type Json = ColumnType<unknown, string, string>;
type NullableJson = ColumnType<unknown, string | null | undefined, string | null>;
type Time = ColumnType<Date, Date | string, Date | string>;
type NullableTime = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** Defaults to `now()` in the database. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export type ApiKeyRole = "owner" | "member";
export type WakeStatus = "queued" | "running" | "completed" | "failed" | "cancelled";
export type ToolCallStatus = "planned" | "running" | "succeeded" | "failed" | "unknown" | "cancelled";
export type SpanStatusCode = "unset" | "ok" | "error";
export type ScheduleKind = "reminder" | "task";
export type FiringOutcome = "fired" | "skipped" | "session_ended" | "agent_archived";

export interface TenantsTable {
  id: string;
  name: string;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  role: ApiKeyRole;
  /** sha256 hex of the full key; the key itself is never stored (invariant 9). */
  key_hash: string;
  key_prefix: string;
  name: string;
  created_at: CreatedAt;
  revoked_at: NullableTime;
}

export interface AgentsTable {
  id: string;
  tenant_id: string;
  name: string;
  latest_version: number;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  archived_at: NullableTime;
}

/** Immutable: an update of an agent inserts a new version. */
export interface AgentVersionsTable {
  agent_id: string;
  version: number;
  tenant_id: string;
  spec: Json;
  created_at: CreatedAt;
}

export interface EnvironmentsTable {
  id: string;
  tenant_id: string;
  name: string;
  spec: Json;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  archived_at: NullableTime;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  agent_version: number;
  environment_id: string | null;
  parent_session_id: string | null;
  status: SessionStatus;
  /** The SessionState projection; written only by the event store. */
  state: Json;
  last_seq: number;
  /** Fencing epoch, bumped by every lease acquisition and re-queue (invariant 3). */
  lease_epoch: Generated<number>;
  /** 0 for a root session, its parent's + 1 for a sub-session. */
  depth: Generated<number>;
  /** How a sub-session finished, once its parent was told (`session.child_completed`); null before. */
  child_outcome: NullableJson;
  /** The open `session_run_child` run of this sub-session (`ChildRun`), null when none (migration 0027). */
  child_run: NullableJson;
  /** The model this session runs instead of its agent version's (same provider); null for the agent's. */
  model: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface SessionEventsTable {
  session_id: string;
  seq: number;
  id: string;
  tenant_id: string;
  type: EventType;
  /** The payload (with its `type`), without the envelope. */
  body: Json;
  processed_at: NullableTime;
  created_at: Time;
  wake_id: string | null;
  trace_id: string | null;
}

export interface OutboxTable {
  id: Generated<number>;
  tenant_id: string;
  /**
   * One commit's events as published, in seq order (a non-empty array). Each one's id is its
   * `Nats-Msg-Id`; the relay builds its subject from it through the bus's layout.
   */
  messages: Json;
  headers: Json;
  created_at: CreatedAt;
}

export interface WakesTable {
  id: string;
  tenant_id: string;
  session_id: string;
  status: WakeStatus;
  reason: WakeReason;
  attempt: number;
  worker_id: string | null;
  lease_epoch: number | null;
  lease_expires_at: NullableTime;
  due_at: Time;
  created_at: CreatedAt;
  started_at: NullableTime;
  finished_at: NullableTime;
  /** When its job was published; null while the wake is held back by its tenant's in-flight limit. */
  published_at: NullableTime;
}

/** The tool-call ledger: a call is `planned` before it runs (invariant 4). */
export interface ToolCallsTable {
  /** The tool-use event id. */
  id: string;
  tenant_id: string;
  session_id: string;
  wake_id: string;
  name: string;
  input: Json;
  status: ToolCallStatus;
  idempotent: boolean;
  result: NullableJson;
  /** The batch whose plan scheduled this call. */
  batch_id: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface SpansTable {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  tenant_id: string | null;
  session_id: string | null;
  wake_id: string | null;
  name: string;
  kind: string;
  service_name: string;
  start_time: Time;
  end_time: Time;
  status_code: SpanStatusCode;
  status_message: string | null;
  attributes: Json;
  events: Json;
}

export interface AgentStateTable {
  tenant_id: string;
  agent_id: string;
  key: string;
  value: Json;
  updated_at: UpdatedAt;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  request_hash: string;
  status_code: number;
  response: Json;
  created_at: CreatedAt;
}

/** The stored batch plan of one model response (tool-runtime's `BatchPlan`). */
export interface ToolBatchesTable {
  id: string;
  tenant_id: string;
  session_id: string;
  wake_id: string;
  plan: Json;
  created_at: CreatedAt;
}

/** A tenant's own model provider key, sealed with the operator key `key_id` (iv | tag | ciphertext). */
export interface ProviderCredentialsTable {
  tenant_id: string;
  provider: "anthropic" | "openai" | "openai_compatible";
  key_id: string;
  sealed: Buffer;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A tenant's vault secret, sealed like a provider key (migration 0023). */
export interface VaultSecretsTable {
  tenant_id: string;
  name: string;
  key_id: string;
  sealed: Buffer;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A reminder (one-shot into its session) or a scheduled task (cron or one-shot, fresh session each). */
export interface SchedulesTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  kind: ScheduleKind;
  session_id: string | null;
  name: string | null;
  prompt: string;
  at: NullableTime;
  cron: string | null;
  timezone: string | null;
  max_total_tokens: number | null;
  /** The model each session a task starts runs (its agent's provider); null for the agent's. */
  model: ColumnType<string | null, string | null | undefined, string | null>;
  enabled: Generated<boolean>;
  /** Null once finished. */
  next_run_at: NullableTime;
  last_run_at: NullableTime;
  created_at: CreatedAt;
}

/** One occurrence of a schedule, recorded once (its primary key is the occurrence key). */
export interface ScheduleFiringsTable {
  tenant_id: string;
  schedule_id: string;
  occurrence_at: Time;
  outcome: FiringOutcome;
  session_id: string | null;
  fired_at: Time;
}

/** Immutable history of the memory stores (migration 0012): one row per write or delete. */
export interface MemoryVersionsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  store: string;
  target: string;
  content: string;
  metadata: Json;
  content_hash: string;
  size_bytes: number;
  deleted: boolean;
  author_kind: "tool" | "api" | "harness";
  author_session_id: string | null;
  author_wake_id: string | null;
  author_tool_call_id: string | null;
  author_api_key_id: string | null;
  created_at: CreatedAt;
}

/** The live entry of each store, its search columns maintained by Postgres. */
export interface MemoryEntriesTable {
  tenant_id: string;
  agent_id: string;
  store: string;
  target: string;
  content: string;
  metadata: Json;
  size_bytes: number;
  current_version_id: string;
  updated_at: UpdatedAt;
  search_tsv: ColumnType<string, never, never>;
}

/** The recorded result of a memory write, by tool call id (idempotency). */
export interface MemoryToolCallsTable {
  tenant_id: string;
  tool_call_id: string;
  tool: string;
  result: Json;
  created_at: CreatedAt;
}

/** An outcome a tool defined (migration 0019); `user.define_outcome` events are outcomes without a row. */
export interface OutcomesTable {
  id: string;
  tenant_id: string;
  session_id: string;
  title: string;
  criteria: Json;
  evaluator_prompt: string | null;
  created_at: CreatedAt;
}

/** One immutable version of a file of an agent's substrate (/workspace/agent). */
export interface SubstrateVersionsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  path: string;
  content: string;
  content_hash: string;
  size_bytes: number;
  restored_from_version_id: string | null;
  author_kind: "tool" | "api" | "harness";
  author_session_id: string | null;
  author_wake_id: string | null;
  author_tool_call_id: string | null;
  author_api_key_id: string | null;
  created_at: CreatedAt;
}

/** Each substrate file's latest version. */
export interface SubstrateFilesTable {
  tenant_id: string;
  agent_id: string;
  path: string;
  current_version_id: string;
  content_hash: string;
  size_bytes: number;
  updated_at: Generated<Date>;
}

/** One graded attempt at an outcome, numbered per outcome from 1. */
export interface OutcomeEvaluationsTable {
  tenant_id: string;
  outcome_id: string;
  iteration: number;
  session_id: string;
  wake_id: string | null;
  evaluator: "model" | "rubric";
  score: number;
  passed: boolean;
  feedback: string;
  criteria_results: Json;
  created_at: CreatedAt;
}

/** The head of one agent-defined tool, library or UI component (migration 0020): its current version. */
export interface AgentCodeTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  kind: AgentCodeKind;
  name: string;
  version: number;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  deleted_at: NullableTime;
}

/** One immutable save of an agent-defined tool, library or UI component. */
export interface AgentCodeVersionsTable {
  tenant_id: string;
  code_id: string;
  version: number;
  description: string;
  code: string;
  schema: NullableJson;
  requires: Json;
  session_id: string | null;
  tool_call_id: string | null;
  created_at: CreatedAt;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  environments: EnvironmentsTable;
  sessions: SessionsTable;
  session_events: SessionEventsTable;
  outbox: OutboxTable;
  wakes: WakesTable;
  tool_calls: ToolCallsTable;
  tool_batches: ToolBatchesTable;
  spans: SpansTable;
  agent_state: AgentStateTable;
  idempotency_keys: IdempotencyKeysTable;
  provider_credentials: ProviderCredentialsTable;
  vault_secrets: VaultSecretsTable;
  schedules: SchedulesTable;
  schedule_firings: ScheduleFiringsTable;
  memory_versions: MemoryVersionsTable;
  memory_entries: MemoryEntriesTable;
  memory_tool_calls: MemoryToolCallsTable;
  outcomes: OutcomesTable;
  outcome_evaluations: OutcomeEvaluationsTable;
  agent_code: AgentCodeTable;
  agent_code_versions: AgentCodeVersionsTable;
  substrate_versions: SubstrateVersionsTable;
  substrate_files: SubstrateFilesTable;
}

export type WakeRow = Selectable<WakesTable>;
export type NewWake = Insertable<WakesTable>;
export type ToolCallRow = Selectable<ToolCallsTable>;
export type NewToolCall = Insertable<ToolCallsTable>;
export type ToolCallUpdate = Updateable<ToolCallsTable>;
export type OutboxRow = Selectable<OutboxTable>;
export type SpanRow = Selectable<SpansTable>;
export type NewSpan = Insertable<SpansTable>;
