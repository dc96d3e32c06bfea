import { createHash } from "node:crypto";
import { type MemoryAuthor, type MemoryVersion, WakeloopError } from "@wakeloop/contracts";
import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, MemoryVersionsTable } from "./database";
import { newId } from "./ids";
import { withTenant } from "./tenant-scope";

/*
 * The memory stores of the memory-retrieval service. Every write is serialized per store (a
 * transaction-scoped advisory lock), checks the caller's expected version and the size limits, appends
 * an immutable version and moves the live entry to it, all in the caller's transaction when there is
 * one, so a tool call's write and its idempotency record commit together.
 */

export interface MemoryScope {
  tenantId: string;
  agentId: string;
}

export interface MemoryLimits {
  /** Bytes (UTF-8) of one entry's content. */
  maxEntryBytes: number;
  /** Bytes of all live entries of one store of one agent. */
  maxStoreBytes: number;
}

export interface MemoryWrite {
  store: string;
  target: string;
  content: string;
  metadata?: Record<string, unknown>;
  /** undefined: no precondition; null: the entry must not exist; an id: it must be the current version. */
  expectedVersionId?: string | null;
  /** Removes the live entry; the history keeps a `deleted` version. */
  delete?: boolean;
  author: MemoryAuthor;
}

export interface MemoryEntry {
  store: string;
  target: string;
  content: string;
  metadata: Record<string, unknown>;
  version_id: string;
  size_bytes: number;
  updated_at: string;
}

export type MemoryEntrySummary = Omit<MemoryEntry, "content">;

export interface MemoryStoreSummary {
  store: string;
  entries: number;
  bytes: number;
}

export interface MemorySearchOptions {
  query: string;
  /** Only these stores; default every store not in `excludeStores`. */
  stores?: string[];
  excludeStores?: string[];
  /** Only entries whose metadata does not say `enabled: false` (skills). */
  enabledOnly?: boolean;
  limit: number;
}

export interface MemoryHit {
  store: string;
  target: string;
  version_id: string;
  metadata: Record<string, unknown>;
  snippet: string;
  rank: number;
  /** `full_text`: websearch query over the ranked tsvector; `trigram`: the identifier fallback. */
  match: "full_text" | "trigram";
}

/** The hash every stored version carries: `sha256:<hex>` of the UTF-8 content. */
export function contentHash(content: string): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

function conflict(current: string | null, expected: string | null): WakeloopError {
  return new WakeloopError(
    "memory_version_conflict",
    current === null
      ? `the entry does not exist (expected version ${expected}); read it again before writing`
      : `the entry changed: its current version is ${current}, not ${expected ?? "absent"}; read it again and retry`,
    { details: { current_version_id: current, expected_version_id: expected } },
  );
}

function versionFromRow(row: Selectable<MemoryVersionsTable>): MemoryVersion {
  return {
    id: row.id,
    store: row.store,
    target: row.target,
    content: row.content,
    content_hash: row.content_hash,
    size_bytes: row.size_bytes,
    deleted: row.deleted,
    metadata: row.metadata as Record<string, unknown>,
    author: {
      kind: row.author_kind,
      session_id: row.author_session_id,
      wake_id: row.author_wake_id,
      tool_call_id: row.author_tool_call_id,
      api_key_id: row.author_api_key_id,
    },
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Serializes writes to one store of one agent until the transaction ends. A read-modify-write (append,
 * find/replace) takes it before reading, so its write cannot lose a concurrent one; it is reentrant.
 */
export async function lockMemoryStore(
  db: Kysely<Database>,
  scope: MemoryScope,
  store: string,
): Promise<void> {
  await withTenant(db, scope.tenantId, async (trx) => {
    const key = `${scope.tenantId}/${scope.agentId}/${store}`;
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
  });
}

/** Appends a version and makes it the entry's current one; fails cleanly without writing anything. */
export async function writeMemory(
  db: Kysely<Database>,
  scope: MemoryScope,
  write: MemoryWrite,
  limits: MemoryLimits,
): Promise<MemoryVersion> {
  const size = Buffer.byteLength(write.content, "utf8");
  if (size > limits.maxEntryBytes) {
    throw new WakeloopError(
      "memory_entry_too_large",
      `the entry is ${size} bytes; one entry may hold at most ${limits.maxEntryBytes} bytes`,
      { details: { size_bytes: size, max_entry_bytes: limits.maxEntryBytes } },
    );
  }
  return withTenant(db, scope.tenantId, async (trx) => {
    await lockMemoryStore(trx, scope, write.store);
    const inStore = trx
      .selectFrom("memory_entries")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("store", "=", write.store);
    const current = await inStore
      .select(["current_version_id", "size_bytes", "metadata"])
      .where("target", "=", write.target)
      .executeTakeFirst();
    const currentId = current?.current_version_id ?? null;
    if (write.expectedVersionId !== undefined && write.expectedVersionId !== currentId) {
      throw conflict(currentId, write.expectedVersionId);
    }
    if (write.delete && current === undefined) {
      throw new WakeloopError("memory_not_found", `${write.store}/${write.target} does not exist`);
    }
    if (!write.delete) {
      const { total } = await inStore
        .select(sql<string>`coalesce(sum(size_bytes), 0)`.as("total"))
        .executeTakeFirstOrThrow();
      const after = Number(total) - (current?.size_bytes ?? 0) + size;
      if (after > limits.maxStoreBytes) {
        throw new WakeloopError(
          "memory_store_full",
          `store ${write.store} would hold ${after} bytes; a store may hold at most ${limits.maxStoreBytes} bytes — shorten or delete entries first`,
          { details: { store_bytes: after, max_store_bytes: limits.maxStoreBytes } },
        );
      }
    }
    const metadata = JSON.stringify(write.metadata ?? current?.metadata ?? {});
    const row = await trx
      .insertInto("memory_versions")
      .values({
        id: newId("memoryVersion"),
        tenant_id: scope.tenantId,
        agent_id: scope.agentId,
        store: write.store,
        target: write.target,
        content: write.content,
        metadata,
        content_hash: contentHash(write.content),
        size_bytes: size,
        deleted: write.delete ?? false,
        author_kind: write.author.kind,
        author_session_id: write.author.session_id,
        author_wake_id: write.author.wake_id,
        author_tool_call_id: write.author.tool_call_id,
        author_api_key_id: write.author.api_key_id ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (write.delete) {
      await trx
        .deleteFrom("memory_entries")
        .where("tenant_id", "=", scope.tenantId)
        .where("agent_id", "=", scope.agentId)
        .where("store", "=", write.store)
        .where("target", "=", write.target)
        .execute();
      return versionFromRow(row);
    }
    await trx
      .insertInto("memory_entries")
      .values({
        tenant_id: scope.tenantId,
        agent_id: scope.agentId,
        store: write.store,
        target: write.target,
        content: write.content,
        metadata,
        size_bytes: size,
        current_version_id: row.id,
      })
      .onConflict((c) =>
        c.columns(["tenant_id", "agent_id", "store", "target"]).doUpdateSet({
          content: write.content,
          metadata,
          size_bytes: size,
          current_version_id: row.id,
          updated_at: new Date(),
        }),
      )
      .execute();
    return versionFromRow(row);
  });
}

const entryColumns = [
  "store",
  "target",
  "metadata",
  "current_version_id",
  "size_bytes",
  "updated_at",
] as const;

function summaryFromRow(row: {
  store: string;
  target: string;
  metadata: unknown;
  current_version_id: string;
  size_bytes: number;
  updated_at: Date;
}): MemoryEntrySummary {
  return {
    store: row.store,
    target: row.target,
    metadata: row.metadata as Record<string, unknown>,
    version_id: row.current_version_id,
    size_bytes: row.size_bytes,
    updated_at: row.updated_at.toISOString(),
  };
}

/** The live entry, or null when it does not exist (or was deleted). */
export function readMemoryEntry(
  db: Kysely<Database>,
  scope: MemoryScope,
  store: string,
  target: string,
): Promise<MemoryEntry | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("memory_entries")
      .select([...entryColumns, "content"])
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("store", "=", store)
      .where("target", "=", target)
      .executeTakeFirst();
    return row ? { ...summaryFromRow(row), content: row.content } : null;
  });
}

/** The agent's stores that hold live entries, with their size. */
export function listMemoryStores(db: Kysely<Database>, scope: MemoryScope): Promise<MemoryStoreSummary[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const rows = await trx
      .selectFrom("memory_entries")
      .select(["store", sql<string>`count(*)`.as("entries"), sql<string>`sum(size_bytes)`.as("bytes")])
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .groupBy("store")
      .orderBy("store")
      .execute();
    return rows.map((row) => ({ store: row.store, entries: Number(row.entries), bytes: Number(row.bytes) }));
  });
}

/** Live entries of one store with their content, by target or newest first. */
export function listMemoryEntries(
  db: Kysely<Database>,
  scope: MemoryScope,
  store: string,
  options: { limit: number; newestFirst?: boolean },
): Promise<MemoryEntry[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const rows = await trx
      .selectFrom("memory_entries")
      .select([...entryColumns, "content"])
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("store", "=", store)
      .orderBy(options.newestFirst ? "current_version_id" : "target", options.newestFirst ? "desc" : "asc")
      .limit(options.limit)
      .execute();
    return rows.map((row) => ({ ...summaryFromRow(row), content: row.content }));
  });
}

/**
 * What a wake's system context needs of an agent's memory, in one call (`wl_memory_context`, which
 * scopes itself): the first `limit` entries of `store` by target (target and metadata), and whether
 * the agent has any live entry outside `notRecalled` (with none, recall cannot find one).
 */
export async function memoryContext(
  db: Kysely<Database>,
  scope: MemoryScope,
  options: { store: string; limit: number; notRecalled: readonly string[] },
): Promise<{ entries: Array<Pick<MemoryEntrySummary, "target" | "metadata">>; recallable: boolean }> {
  const { rows } = await sql<{ entries: unknown; recallable: boolean }>`SELECT * FROM wl_memory_context(
    ${scope.tenantId}, ${scope.agentId}, ${options.store}, ${options.limit}::integer,
    ${options.notRecalled}::text[])`.execute(db);
  const [row] = rows;
  if (row === undefined) throw new Error("wl_memory_context returned no row");
  return {
    entries: row.entries as Array<Pick<MemoryEntrySummary, "target" | "metadata">>,
    recallable: row.recallable,
  };
}

/** An entry's versions, newest first (including the `deleted` ones). */
export function listMemoryVersions(
  db: Kysely<Database>,
  scope: MemoryScope,
  store: string,
  target: string,
  options: { limit: number },
): Promise<MemoryVersion[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const rows = await trx
      .selectFrom("memory_versions")
      .selectAll()
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("store", "=", store)
      .where("target", "=", target)
      .orderBy("id", "desc")
      .limit(options.limit)
      .execute();
    return rows.map(versionFromRow);
  });
}

export function readMemoryVersion(
  db: Kysely<Database>,
  scope: MemoryScope,
  versionId: string,
): Promise<MemoryVersion | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("memory_versions")
      .selectAll()
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("id", "=", versionId)
      .executeTakeFirst();
    return row ? versionFromRow(row) : null;
  });
}

/**
 * Full-text search (websearch syntax, English configuration, `ts_rank_cd` with the target and
 * description weighted above the content); when that finds nothing and the query is one token, a
 * trigram match on target and content, which catches identifiers and fragments the text parser splits
 * or stems away.
 */
export function searchMemory(
  db: Kysely<Database>,
  scope: MemoryScope,
  options: MemorySearchOptions,
): Promise<MemoryHit[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    type Row = Omit<MemoryHit, "version_id" | "match"> & { current_version_id: string };
    // Definer functions (migration 0012): under row-level security the indexes could not serve these.
    const args = sql`${scope.agentId}, ${options.query}, ${options.stores ?? null}::text[],
      ${options.excludeStores ?? null}::text[], ${options.enabledOnly ?? false}, ${options.limit}::int`;
    const fullText = await sql<Row>`SELECT * FROM wl_memory_search_text(${args})`.execute(trx);
    if (fullText.rows.length > 0) return fullText.rows.map((row) => hit(row, "full_text"));
    // Trigrams are for identifiers and fragments (one token); words the text search did not find are
    // not there, and fuzzy-matching a sentence against every entry would only cost time.
    if (/\s/.test(options.query.trim())) return [];
    const trigram = await sql<Row>`SELECT * FROM wl_memory_search_trigram(${args})`.execute(trx);
    return trigram.rows.map((row) => hit(row, "trigram"));
  });
}

/** Live entries of the agent by store and target, as hits with no rank (found by their vectors). */
export function memoryEntriesByKey(
  db: Kysely<Database>,
  scope: MemoryScope,
  keys: ReadonlyArray<{ store: string; target: string }>,
): Promise<Array<Omit<MemoryHit, "rank" | "match">>> {
  if (keys.length === 0) return Promise.resolve([]);
  return withTenant(db, scope.tenantId, async (trx) => {
    const result = await sql<{
      store: string;
      target: string;
      current_version_id: string;
      metadata: Record<string, unknown>;
      snippet: string;
    }>`SELECT e.store, e.target, e.current_version_id, e.metadata, left(e.content, 200) AS snippet
      FROM memory_entries e JOIN jsonb_to_recordset(${JSON.stringify(keys)}::jsonb) AS k (store text, target text)
        ON e.store = k.store AND e.target = k.target
      WHERE e.tenant_id = ${scope.tenantId} AND e.agent_id = ${scope.agentId}`.execute(trx);
    return result.rows.map(({ current_version_id, ...row }) => ({ ...row, version_id: current_version_id }));
  });
}

function hit(
  row: Omit<MemoryHit, "version_id" | "match"> & { current_version_id: string },
  match: MemoryHit["match"],
): MemoryHit {
  return {
    store: row.store,
    target: row.target,
    version_id: row.current_version_id,
    metadata: row.metadata,
    snippet: row.snippet,
    rank: Number(row.rank),
    match,
  };
}

/**
 * The recorded result of a write made under this tool call id, if any. Call it in the transaction that
 * will record the result: it holds a lock on the id until then, so a duplicate delivery waits for the
 * first and replays it.
 */
export async function recordedMemoryCall(
  db: Kysely<Database>,
  tenantId: string,
  toolCallId: string,
): Promise<unknown> {
  return withTenant(db, tenantId, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${tenantId}/${toolCallId}`}, 1))`.execute(trx);
    const row = await trx
      .selectFrom("memory_tool_calls")
      .select("result")
      .where("tenant_id", "=", tenantId)
      .where("tool_call_id", "=", toolCallId)
      .executeTakeFirst();
    return row?.result;
  });
}

export async function recordMemoryCall(
  db: Kysely<Database>,
  tenantId: string,
  call: { toolCallId: string; tool: string; result: unknown },
): Promise<void> {
  await withTenant(db, tenantId, (trx) =>
    trx
      .insertInto("memory_tool_calls")
      .values({
        tenant_id: tenantId,
        tool_call_id: call.toolCallId,
        tool: call.tool,
        result: JSON.stringify(call.result),
      })
      .execute(),
  );
}
