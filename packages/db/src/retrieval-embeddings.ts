import { type Kysely, sql } from "kysely";
import type { Database } from "./database";
import type { MemoryScope, MemorySearchOptions } from "./memory-store";
import { withTenant } from "./tenant-scope";

/*
 * Embeddings of indexed events and memory entries (migrations 0025, 0029): the queue the memory-retrieval
 * service's embedders drain across tenants (through definer functions), one per model, and the vectors a
 * hybrid search reads back for one agent and model. Vectors are float4 bytes (`bytea`); see 0025 for why.
 */

export type EmbeddingKind = "event" | "memory";

/** One queued row, claimed: its text is null when the event or entry is gone. */
export interface EmbeddingWork {
  tenant_id: string;
  agent_id: string;
  kind: EmbeddingKind;
  /** Event id, or memory store. */
  ref: string;
  /** Memory target; '' for events. */
  target: string;
  attempts: number;
  session_id: string | null;
  version_id: string | null;
  text: string | null;
}

/**
 * Registers `model` as embedded by a running replica until `ttlMs` from now (the replica renews it
 * while it runs), or, for a replica without embeddings (null), registers nothing. Either way, models no
 * replica renewed in time are dropped first with their queue (migration 0029). A model not registered
 * before queues everything that has no vector of it. Returns how many rows were queued.
 */
export async function configureEmbeddings(
  db: Kysely<Database>,
  model: string | null,
  ttlMs: number,
): Promise<number> {
  const result = await sql<{ queued: string }>`
    SELECT wl_embedding_configure(${model}, ${ttlMs}::int) AS queued`.execute(db);
  return Number(result.rows[0]?.queued ?? 0);
}

/**
 * Claims up to `maxRows` due rows of `model`, of every tenant; each comes back after `retryMs` ×
 * 2^attempts unless stored.
 */
export async function claimEmbeddingWork(
  db: Kysely<Database>,
  options: { model: string; maxRows: number; retryMs: number; maxAttempts: number },
): Promise<EmbeddingWork[]> {
  const result = await sql<EmbeddingWork>`SELECT * FROM wl_embedding_claim(${options.model},
    ${options.maxRows}::int, ${options.retryMs}::int, ${options.maxAttempts}::int)`.execute(db);
  return result.rows.map((row) => ({ ...row, attempts: Number(row.attempts) }));
}

/** Stores the vectors of claimed rows (null: the source is gone) and takes them off the queue. */
export async function storeEmbeddings(
  db: Kysely<Database>,
  model: string,
  done: ReadonlyArray<EmbeddingWork & { vector: Float32Array | null }>,
): Promise<void> {
  if (done.length === 0) return;
  const rows = done.map(({ text: _text, vector, ...key }) => ({
    ...key,
    vector:
      vector === null
        ? null
        : Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64"),
  }));
  await sql`SELECT wl_embedding_store(${model}, ${JSON.stringify(rows)}::jsonb)`.execute(db);
}

/** Rows waiting to be embedded (for any model), and rows given up on after `maxAttempts`. */
export async function embeddingBacklog(
  db: Kysely<Database>,
  maxAttempts: number,
): Promise<{ pending: number; failed: number }> {
  const result = await sql<{ pending: string; failed: string }>`
    SELECT * FROM wl_embedding_backlog_size(${maxAttempts}::int)`.execute(db);
  const row = result.rows[0];
  return { pending: Number(row?.pending ?? 0), failed: Number(row?.failed ?? 0) };
}

/** Which stored vector: an event's (ref = event id, target '') or a memory entry's (ref = store). */
export interface VectorKey {
  kind: EmbeddingKind;
  ref: string;
  target: string;
}

/** A stored vector's key and stamp (when it was embedded: it changes only when embedded again). */
export interface VectorStamp extends VectorKey {
  stamp: string;
}

export interface StoredVector extends VectorStamp {
  vector: Float32Array;
}

export interface VectorWindowOptions {
  model: string;
  /** Newest vectors of each kind read at most. */
  window: number;
  kinds: readonly EmbeddingKind[];
  /** Events only of these sessions (default every session of the agent). */
  sessionIds?: string[];
  excludeSessionId?: string;
  /** Memory entries ranked: as the full-text search's (`searchMemory`) stores and enabled filter. */
  memory: Pick<MemorySearchOptions, "stores" | "excludeStores" | "enabledOnly">;
  /** Vectors read whatever their age: the full-text candidates. */
  candidates: readonly VectorKey[];
}

/** A Buffer of float4 bytes as a Float32Array (copied: a pooled Buffer may not be 4-byte aligned). */
const floats = (bytes: Buffer) =>
  new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

/** The embedding time as an opaque, exact stamp (microseconds since the epoch). */
const STAMP = sql`(extract(epoch FROM r.embedded_at) * 1000000)::bigint::text AS stamp`;

/**
 * Which of the agent's vectors a hybrid search ranks, with their stamps but not their bytes (the caller
 * reads those it does not hold with `readVectors`): the newest `window` of each kind (events in scope,
 * memory entries of the stores searched) and those of the full-text candidates.
 */
export function readVectorWindow(
  db: Kysely<Database>,
  scope: MemoryScope,
  options: VectorWindowOptions,
): Promise<VectorStamp[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const base = sql`r.tenant_id = ${scope.tenantId} AND r.agent_id = ${scope.agentId} AND r.model = ${options.model}`;
    const eventScope = sql`(${options.sessionIds ?? null}::text[] IS NULL OR r.session_id = ANY (${options.sessionIds ?? null}::text[]))
      AND (${options.excludeSessionId ?? null}::text IS NULL OR r.session_id <> ${options.excludeSessionId ?? null}::text)`;
    const { stores = null, excludeStores = [], enabledOnly = false } = options.memory;
    // A memory vector exists only for its entry's current version (migration 0029): the store filters
    // apply to its key, and only `enabledOnly` (skills) needs the entry.
    const inStores = sql`NOT r.ref = ANY (${excludeStores}::text[])
      AND (${stores}::text[] IS NULL OR r.ref = ANY (${stores}::text[]))`;
    const enabled = enabledOnly
      ? sql`EXISTS (SELECT 1 FROM memory_entries m WHERE m.tenant_id = r.tenant_id AND m.agent_id = r.agent_id
          AND m.store = r.ref AND m.target = r.target AND coalesce(m.metadata->>'enabled', 'true') = 'true')`
      : sql`true`;
    const parts = [];
    if (options.kinds.includes("event")) {
      parts.push(sql`(SELECT r.kind, r.ref, r.target, ${STAMP} FROM retrieval_embeddings r
        WHERE ${base} AND r.kind = 'event' AND ${eventScope} ORDER BY r.embedded_at DESC LIMIT ${options.window})`);
    }
    if (options.kinds.includes("memory")) {
      parts.push(sql`(SELECT r.kind, r.ref, r.target, ${STAMP} FROM retrieval_embeddings r
        WHERE ${base} AND r.kind = 'memory' AND ${inStores} AND ${enabled}
        ORDER BY r.embedded_at DESC LIMIT ${options.window})`);
    }
    if (options.candidates.length > 0) {
      // The full-text candidates passed the same filters already.
      parts.push(sql`(SELECT r.kind, r.ref, r.target, ${STAMP} FROM ${byKey(scope, options.candidates)}
        WHERE ${base})`);
    }
    if (parts.length === 0) return [];
    const result = await sql<VectorStamp>`${sql.join(parts, sql` UNION ALL `)}`.execute(trx);
    // A candidate that is also in a window comes twice: once is enough.
    const seen = new Set<string>();
    return result.rows.filter((row) => {
      const key = `${row.kind}\u0000${row.ref}\u0000${row.target}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  });
}

/**
 * Vectors by key, joined through the primary key. Two arrays unnested side by side: the planner expects
 * a few rows and looks each key up (a JSON record set was estimated at 100 rows and hash-joined every
 * vector).
 */
function byKey(scope: MemoryScope, keys: readonly VectorKey[]) {
  return sql`unnest(${keys.map((key) => key.kind)}::text[], ${keys.map((key) => key.ref)}::text[],
      ${keys.map((key) => key.target)}::text[]) AS c (kind, ref, target)
    JOIN retrieval_embeddings r ON r.tenant_id = ${scope.tenantId} AND r.kind = c.kind AND r.ref = c.ref
      AND r.target = c.target`;
}

/** The stored vectors of `keys` in `model` (a key with none is left out), with their stamps. */
export function readVectors(
  db: Kysely<Database>,
  scope: MemoryScope,
  model: string,
  keys: readonly VectorKey[],
): Promise<StoredVector[]> {
  if (keys.length === 0) return Promise.resolve([]);
  return withTenant(db, scope.tenantId, async (trx) => {
    const result = await sql<VectorStamp & { vector: Buffer }>`
      SELECT r.kind, r.ref, r.target, ${STAMP}, r.vector FROM ${byKey(scope, keys)}
      WHERE r.agent_id = ${scope.agentId} AND r.model = ${model}`.execute(trx);
    return result.rows.map((row) => ({ ...row, vector: floats(row.vector) }));
  });
}
