import type { EventType, SessionStatus, WakeReason } from "@wakeloop/contracts";
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
  /** The event id; the relay builds the subject from the event through the bus's layout. */
  msg_id: string;
  body: Json;
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
}

export type WakeRow = Selectable<WakesTable>;
export type NewWake = Insertable<WakesTable>;
export type ToolCallRow = Selectable<ToolCallsTable>;
export type NewToolCall = Insertable<ToolCallsTable>;
export type ToolCallUpdate = Updateable<ToolCallsTable>;
export type OutboxRow = Selectable<OutboxTable>;
export type SpanRow = Selectable<SpansTable>;
export type NewSpan = Insertable<SpansTable>;
