import {
  type MemoryAuthor,
  type SubstrateFile,
  type SubstrateVersion,
  type SubstrateVersionWithContent,
  WakeloopError,
} from "@wakeloop/contracts";
import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, SubstrateVersionsTable } from "./database";
import { newId } from "./ids";
import { contentHash, type MemoryScope } from "./memory-store";
import { withTenant } from "./tenant-scope";

/*
 * The agent's versioned substrate (the files at /workspace/agent). Writes of one agent are serialized
 * (a transaction-scoped advisory lock), so the expected-version check, the per-agent size limit and
 * the move of the file to its new version see one consistent state; a write made under a tool call id
 * is found again by that id, so a retried call returns its version instead of writing another.
 */

export interface SubstrateLimits {
  /** Bytes (UTF-8) of one file. */
  maxFileBytes: number;
  /** Bytes of the latest versions of all of one agent's files. */
  maxAgentBytes: number;
}

export interface SubstrateWrite {
  path: string;
  content: string;
  /** Preconditions on the file's latest version; a mismatch writes nothing. */
  expectedVersionId?: string;
  expectedContentHash?: string;
  author: MemoryAuthor;
}

export interface SubstrateWriteResult {
  version: SubstrateVersion;
  /** The latest version before this write; null for a new file. */
  previousVersionId: string | null;
  /** True when the tool call id had already written this version (a retry). */
  replayed: boolean;
}

export interface SubstrateRestore {
  versionId: string;
  expectedVersionId?: string;
  expectedContentHash?: string;
  author: MemoryAuthor;
}

function conflict(
  path: string,
  current: { id: string; hash: string } | null,
  expected: { versionId?: string; contentHash?: string },
): WakeloopError {
  const now = current === null ? "does not exist yet" : `is at version ${current.id} (${current.hash})`;
  return new WakeloopError(
    "substrate_version_conflict",
    `${path} ${now}, not ${expected.versionId ?? expected.contentHash}: someone promoted first; ` +
      "compare again and pass the new latestVersionId",
    {
      details: {
        path,
        latest_version_id: current?.id ?? null,
        latest_content_hash: current?.hash ?? null,
        expected_version_id: expected.versionId ?? null,
        expected_content_hash: expected.contentHash ?? null,
      },
    },
  );
}

const versionColumns = [
  "id",
  "path",
  "content_hash",
  "size_bytes",
  "restored_from_version_id",
  "author_kind",
  "author_session_id",
  "author_wake_id",
  "author_tool_call_id",
  "author_api_key_id",
  "created_at",
] as const;

function versionFromRow(
  row: Pick<Selectable<SubstrateVersionsTable>, (typeof versionColumns)[number]>,
): SubstrateVersion {
  return {
    id: row.id,
    path: row.path,
    content_hash: row.content_hash,
    size_bytes: row.size_bytes,
    restored_from_version_id: row.restored_from_version_id,
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

/** Writes `content` as the file's new latest version, or returns the version its tool call already wrote. */
export function writeSubstrateFile(
  db: Kysely<Database>,
  scope: MemoryScope,
  write: SubstrateWrite,
  limits: SubstrateLimits,
): Promise<SubstrateWriteResult> {
  return writeVersion(db, scope, write, null, limits);
}

/** Makes an old version's content the file's new latest version (a new version, history kept). */
export function restoreSubstrateVersion(
  db: Kysely<Database>,
  scope: MemoryScope,
  restore: SubstrateRestore,
  limits: SubstrateLimits,
): Promise<SubstrateWriteResult> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const source = await readSubstrateVersion(trx, scope, restore.versionId);
    if (source === null) {
      throw new WakeloopError(
        "substrate_version_not_found",
        `version ${restore.versionId} is not a substrate version of this agent; list them with resources_list_versions`,
      );
    }
    const { versionId: _, ...rest } = restore;
    return writeVersion(
      trx,
      scope,
      { ...rest, path: source.path, content: source.content },
      source.id,
      limits,
    );
  });
}

async function writeVersion(
  db: Kysely<Database>,
  scope: MemoryScope,
  write: SubstrateWrite,
  restoredFrom: string | null,
  limits: SubstrateLimits,
): Promise<SubstrateWriteResult> {
  const size = Buffer.byteLength(write.content, "utf8");
  return withTenant(db, scope.tenantId, async (trx) => {
    const key = `substrate/${scope.tenantId}/${scope.agentId}`;
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
    const toolCallId = write.author.tool_call_id;
    if (toolCallId !== null) {
      const earlier = await trx
        .selectFrom("substrate_versions")
        .select(versionColumns)
        .where("tenant_id", "=", scope.tenantId)
        .where("author_tool_call_id", "=", toolCallId)
        .executeTakeFirst();
      if (earlier !== undefined)
        return { version: versionFromRow(earlier), previousVersionId: null, replayed: true };
    }
    if (size > limits.maxFileBytes) {
      throw new WakeloopError(
        "substrate_file_too_large",
        `${write.path} is ${size} bytes; one substrate file may hold at most ${limits.maxFileBytes} bytes`,
        { details: { path: write.path, size_bytes: size, max_file_bytes: limits.maxFileBytes } },
      );
    }
    const files = trx
      .selectFrom("substrate_files")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId);
    const current = await files
      .select(["current_version_id", "content_hash", "size_bytes"])
      .where("path", "=", write.path)
      .executeTakeFirst();
    const latest =
      current === undefined ? null : { id: current.current_version_id, hash: current.content_hash };
    if (
      (write.expectedVersionId !== undefined && write.expectedVersionId !== latest?.id) ||
      (write.expectedContentHash !== undefined && write.expectedContentHash !== latest?.hash)
    ) {
      throw conflict(write.path, latest, {
        ...(write.expectedVersionId !== undefined && { versionId: write.expectedVersionId }),
        ...(write.expectedContentHash !== undefined && { contentHash: write.expectedContentHash }),
      });
    }
    const { total } = await files
      .select(sql<string>`coalesce(sum(size_bytes), 0)`.as("total"))
      .executeTakeFirstOrThrow();
    const after = Number(total) - (current?.size_bytes ?? 0) + size;
    if (after > limits.maxAgentBytes) {
      throw new WakeloopError(
        "substrate_full",
        `the agent's substrate would hold ${after} bytes; it may hold at most ${limits.maxAgentBytes} bytes`,
        { details: { total_bytes: after, max_agent_bytes: limits.maxAgentBytes } },
      );
    }
    const hash = contentHash(write.content);
    const row = await trx
      .insertInto("substrate_versions")
      .values({
        id: newId("substrateVersion"),
        tenant_id: scope.tenantId,
        agent_id: scope.agentId,
        path: write.path,
        content: write.content,
        content_hash: hash,
        size_bytes: size,
        restored_from_version_id: restoredFrom,
        author_kind: write.author.kind,
        author_session_id: write.author.session_id,
        author_wake_id: write.author.wake_id,
        author_tool_call_id: toolCallId,
        author_api_key_id: write.author.api_key_id ?? null,
      })
      .returning(versionColumns)
      .executeTakeFirstOrThrow();
    await trx
      .insertInto("substrate_files")
      .values({
        tenant_id: scope.tenantId,
        agent_id: scope.agentId,
        path: write.path,
        current_version_id: row.id,
        content_hash: hash,
        size_bytes: size,
      })
      .onConflict((c) =>
        c.columns(["tenant_id", "agent_id", "path"]).doUpdateSet({
          current_version_id: row.id,
          content_hash: hash,
          size_bytes: size,
          updated_at: new Date(),
        }),
      )
      .execute();
    return { version: versionFromRow(row), previousVersionId: latest?.id ?? null, replayed: false };
  });
}

/** The agent's files with their latest version, by path. */
export function listSubstrateFiles(db: Kysely<Database>, scope: MemoryScope): Promise<SubstrateFile[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const rows = await trx
      .selectFrom("substrate_files")
      .select(["path", "current_version_id", "content_hash", "size_bytes", "updated_at"])
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .orderBy("path")
      .execute();
    return rows.map((row) => ({
      path: row.path,
      version_id: row.current_version_id,
      content_hash: row.content_hash,
      size_bytes: row.size_bytes,
      updated_at: row.updated_at.toISOString(),
    }));
  });
}

/** The file's latest version with its content, or null when the substrate has no such file. */
export function readSubstrateFile(
  db: Kysely<Database>,
  scope: MemoryScope,
  path: string,
): Promise<SubstrateVersionWithContent | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const file = await trx
      .selectFrom("substrate_files")
      .select("current_version_id")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("path", "=", path)
      .executeTakeFirst();
    return file === undefined ? null : readSubstrateVersion(trx, scope, file.current_version_id);
  });
}

/** A file's versions, newest first. */
export function listSubstrateVersions(
  db: Kysely<Database>,
  scope: MemoryScope,
  path: string,
  options: { limit: number },
): Promise<SubstrateVersion[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const rows = await trx
      .selectFrom("substrate_versions")
      .select(versionColumns)
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("path", "=", path)
      .orderBy("id", "desc")
      .limit(options.limit)
      .execute();
    return rows.map(versionFromRow);
  });
}

export function readSubstrateVersion(
  db: Kysely<Database>,
  scope: MemoryScope,
  versionId: string,
): Promise<SubstrateVersionWithContent | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("substrate_versions")
      .select([...versionColumns, "content"])
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("id", "=", versionId)
      .executeTakeFirst();
    return row === undefined ? null : { ...versionFromRow(row), content: row.content };
  });
}

/** The content of these versions of the agent's files (what a sandbox's /workspace/agent must hold). */
export function substrateContents(
  db: Kysely<Database>,
  scope: MemoryScope,
  versionIds: readonly string[],
): Promise<Array<{ id: string; path: string; content: string }>> {
  if (versionIds.length === 0) return Promise.resolve([]);
  return withTenant(db, scope.tenantId, (trx) =>
    trx
      .selectFrom("substrate_versions")
      .select(["id", "path", "content"])
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("id", "in", versionIds)
      .execute(),
  );
}
