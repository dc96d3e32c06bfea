import { z } from "zod";
import { Content } from "./content";
import { Id, Timestamp } from "./ids";
import { MemoryToolName } from "./memory-tools";

export * from "./memory-tools";

// RPC messages of the `memory` NATS service (actions execute, context, recall, capture_learning, ping).

/** Who wrote a version: a tool call of a session's wake, a person through the API, or the harness. */
export const MemoryAuthor = z.object({
  kind: z.enum(["tool", "api", "harness"]),
  session_id: Id.nullable(),
  wake_id: Id.nullable(),
  tool_call_id: Id.nullable(),
  /** The API key that wrote it, for `api` versions. */
  api_key_id: Id.nullable().default(null),
});
export type MemoryAuthor = z.input<typeof MemoryAuthor>;

export const MemoryExecuteRequest = z.object({
  tenant_id: Id,
  agent_id: Id,
  session_id: Id,
  wake_id: Id,
  /** Idempotency key: a write already made under this id returns its recorded result. */
  tool_call_id: Id,
  tool: MemoryToolName,
  input: z.unknown(),
});
export type MemoryExecuteRequest = z.input<typeof MemoryExecuteRequest>;

export const MemoryExecuteResponse = z.object({
  tool_call_id: Id,
  is_error: z.boolean(),
  content: Content,
  result: z.record(z.string(), z.unknown()),
  /** True when this is the recorded result of an earlier execution of the same call id. */
  replayed: z.boolean(),
});
export type MemoryExecuteResponse = z.infer<typeof MemoryExecuteResponse>;

/**
 * What the harness puts in the system context at wake start: the index of enabled skills, and whether
 * recall could find anything (`recallable`: the agent has entries outside skills and notepads), so a
 * wake of an agent with nothing to recall does not ask. Absent (an older service): ask.
 */
export const MemoryContextRequest = z.object({ tenant_id: Id, agent_id: Id });
export type MemoryContextRequest = z.infer<typeof MemoryContextRequest>;

export const SkillSummary = z.object({ name: z.string(), description: z.string() });
export type SkillSummary = z.infer<typeof SkillSummary>;

export const MemoryContextResponse = z.object({
  skills: z.array(SkillSummary),
  recallable: z.boolean().optional(),
});
export type MemoryContextResponse = z.infer<typeof MemoryContextResponse>;

/** The top memory hits for a wake's new input, with their content, for the system context. */
export const MemoryRecallRequest = z.object({
  tenant_id: Id,
  agent_id: Id,
  /** The new input (user messages since the last model request), searched with any of its words. */
  text: z.string().min(1).max(32_000),
  limit: z.number().int().min(1).max(50),
});
export type MemoryRecallRequest = z.infer<typeof MemoryRecallRequest>;

export const RecalledMemory = z.object({
  store: z.string(),
  target: z.string(),
  version_id: Id,
  content: z.string(),
  rank: z.number(),
});
export type RecalledMemory = z.infer<typeof RecalledMemory>;

export const MemoryRecallResponse = z.object({ hits: z.array(RecalledMemory) });
export type MemoryRecallResponse = z.infer<typeof MemoryRecallResponse>;

/** A durable learning the harness captured from a wake's outcome, listed by `learning_list`. */
export const CaptureLearningRequest = z.object({
  tenant_id: Id,
  agent_id: Id,
  session_id: Id,
  wake_id: Id,
  /** One learning per key: capturing the same key again (a retried wake) writes nothing new. */
  key: z.string().min(1).max(200),
  text: z.string().min(1).max(4_000),
});
export type CaptureLearningRequest = z.infer<typeof CaptureLearningRequest>;

export const CaptureLearningResponse = z.object({ version_id: Id, captured: z.boolean() });
export type CaptureLearningResponse = z.infer<typeof CaptureLearningResponse>;

/** Readiness: a replica answers once it reached Postgres, so tools are offered only then. */
export const MemoryPingRequest = z.object({});
export const MemoryPingResponse = z.object({ ready: z.literal(true), replica_id: z.string() });
export type MemoryPingResponse = z.infer<typeof MemoryPingResponse>;

/** An immutable version as the API and the tools show it. */
export const MemoryVersion = z.object({
  id: Id,
  store: z.string(),
  target: z.string(),
  content: z.string(),
  content_hash: z.string(),
  size_bytes: z.number().int(),
  deleted: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  author: MemoryAuthor,
  created_at: Timestamp,
});
export type MemoryVersion = z.infer<typeof MemoryVersion>;

// ---- API for people: /v1/agents/{id}/memory… -------------------------------------------------------

export const MemoryStoreSummary = z.object({
  store: z.string(),
  entries: z.number().int(),
  bytes: z.number().int(),
});
export const MemoryStoreList = z.object({ data: z.array(MemoryStoreSummary) });
export type MemoryStoreList = z.infer<typeof MemoryStoreList>;

export const MemoryEntry = z.object({
  store: z.string(),
  target: z.string(),
  content: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  version_id: Id,
  size_bytes: z.number().int(),
  updated_at: Timestamp,
});
export type MemoryEntry = z.infer<typeof MemoryEntry>;

export const MemoryEntryList = z.object({ data: z.array(MemoryEntry) });
export type MemoryEntryList = z.infer<typeof MemoryEntryList>;

export const MemoryVersionList = z.object({ data: z.array(MemoryVersion) });
export type MemoryVersionList = z.infer<typeof MemoryVersionList>;

/** A person's correction of an entry: a new immutable version authored by the API key. */
export const PutMemoryEntryRequest = z.strictObject({
  content: z.string(),
  /** Write only over this version (null: only if the entry does not exist); a stale one is a 409. */
  expected_version_id: Id.nullable().optional(),
});
export type PutMemoryEntryRequest = z.infer<typeof PutMemoryEntryRequest>;
