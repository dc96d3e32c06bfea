import { type Agent, AgentSpec, type ListQuery, WakeloopError } from "@wakeloop/contracts";
import {
  type AgentSqlPool,
  type Database,
  dropAgentSqlSchema,
  type LatestAgentVersion,
  newId,
  readJson,
  repinSessions,
  reviseAgent,
  withTenant,
} from "@wakeloop/db";
import { stableStringify } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { notFound } from "../http/api-error";
import { parseInput } from "../http/parse-input";

/**
 * Agents are versioned: `agents` holds identity and the latest version number, `agent_versions` the
 * immutable specs. Sessions pin a version, so an update never changes a running session's agent.
 */

export interface AgentRecord {
  agent: Agent;
  archived: boolean;
}

interface AgentVersionRow {
  id: string;
  created_at: Date;
  archived_at: Date | null;
  version: number;
  spec: unknown;
  version_created_at: Date;
}

function toAgent(row: AgentVersionRow): Agent {
  const spec = readJson(AgentSpec, row.spec, "agent spec");
  return {
    ...spec,
    id: row.id,
    version: row.version,
    created_at: row.created_at.toISOString(),
    // A version never changes after it is made, so its own creation is when the agent last changed.
    updated_at: row.version_created_at.toISOString(),
  };
}

function selectVersions(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom("agents as a")
    .innerJoin("agent_versions as v", "v.agent_id", "a.id")
    .select([
      "a.id",
      "a.created_at",
      "a.archived_at",
      "v.version",
      "v.spec",
      "v.created_at as version_created_at",
    ])
    .where("a.tenant_id", "=", tenantId);
}

export async function insertAgent(
  db: Kysely<Database>,
  tenantId: string,
  spec: AgentSpec,
  now: Date,
): Promise<Agent> {
  const id = newId("agent");
  await withTenant(db, tenantId, async (trx) => {
    await trx
      .insertInto("agents")
      .values({
        id,
        tenant_id: tenantId,
        name: spec.name,
        latest_version: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await trx
      .insertInto("agent_versions")
      .values({ agent_id: id, version: 1, tenant_id: tenantId, spec: JSON.stringify(spec), created_at: now })
      .execute();
  });
  return toAgent({ id, created_at: now, archived_at: null, version: 1, spec, version_created_at: now });
}

/** One version of an agent, the latest when `version` is omitted; 404 when either does not exist. */
export async function findAgent(
  db: Kysely<Database>,
  tenantId: string,
  agentId: string,
  version?: number,
): Promise<AgentRecord> {
  const row = await withTenant(db, tenantId, (trx) =>
    selectVersions(trx, tenantId)
      .where("a.id", "=", agentId)
      .where((eb) =>
        version === undefined
          ? eb("v.version", "=", eb.ref("a.latest_version"))
          : eb("v.version", "=", version),
      )
      .executeTakeFirst(),
  );
  if (row === undefined) {
    throw version === undefined
      ? notFound("agent", agentId)
      : notFound(`version ${version} of agent`, agentId);
  }
  return { agent: toAgent(row), archived: row.archived_at !== null };
}

export async function listAgents(
  db: Kysely<Database>,
  tenantId: string,
  query: ListQuery,
): Promise<{ data: Agent[]; next_after_id: string | null }> {
  const rows = await withTenant(db, tenantId, (trx) => {
    let select = selectVersions(trx, tenantId)
      .whereRef("v.version", "=", "a.latest_version")
      .orderBy("a.id", "desc")
      .limit(query.limit + 1);
    if (query.after_id !== undefined) select = select.where("a.id", "<", query.after_id);
    if (!query.include_archived) select = select.where("a.archived_at", "is", null);
    return select.execute();
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toAgent),
    next_after_id: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

export async function listAgentVersions(
  db: Kysely<Database>,
  tenantId: string,
  agentId: string,
  query: { limit: number; after_version: number },
): Promise<{ data: Agent[]; next_after_version: number | null }> {
  const rows = await withTenant(db, tenantId, async (trx) => {
    await findAgent(trx, tenantId, agentId);
    return selectVersions(trx, tenantId)
      .where("a.id", "=", agentId)
      .where("v.version", ">", query.after_version)
      .orderBy("v.version")
      .limit(query.limit + 1)
      .execute();
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toAgent),
    next_after_version: rows.length > query.limit ? (page.at(-1)?.version ?? null) : null,
  };
}

/** The archived agent refuses new versions: it starts no sessions, so nothing would run them. */
function requireActive(latest: LatestAgentVersion, agentId: string): void {
  if (latest.archived) {
    throw new WakeloopError("agent_archived", `agent ${agentId} is archived and cannot change`, {
      details: { id: agentId },
    });
  }
}

function readSpec(spec: unknown): AgentSpec {
  // Stored specs hold every field; `strip` drops nothing there but keeps the read tolerant.
  return readJson(AgentSpec.strip(), spec, "agent spec");
}

/**
 * A new immutable version made of the latest spec with `patch`'s fields replaced (top-level fields
 * only: a given `model` or `tools` replaces the old one whole). The agent row is locked, so concurrent
 * updates get consecutive versions. A patch that changes nothing makes no version.
 */
export async function updateAgent(
  db: Kysely<Database>,
  tenantId: string,
  agentId: string,
  patch: Partial<AgentSpec>,
  validate: (spec: AgentSpec) => void,
  now: Date,
): Promise<Agent> {
  const revised = await reviseAgent(
    db,
    { tenantId, agentId },
    (latest) => {
      requireActive(latest, agentId);
      const latestSpec = readSpec(latest.spec);
      const spec = parseInput(AgentSpec, { ...latestSpec, ...patch }, "agent");
      validate(spec);
      return stableStringify(spec) === stableStringify(latestSpec) ? null : { name: spec.name, spec };
    },
    now,
  );
  if (revised === null) throw notFound("agent", agentId);
  return (await findAgent(db, tenantId, agentId, revised.version)).agent;
}

/**
 * Rolls the agent back to an earlier version: its spec becomes a new latest version (versions never
 * change, so history keeps the versions in between). Sessions keep the version they run unless
 * `applyToSessions` moves the agent's unfinished sessions onto the new one, in the same transaction.
 */
export async function rollbackAgent(
  db: Kysely<Database>,
  tenantId: string,
  agentId: string,
  target: { version: number; applyToSessions: boolean },
  validate: (spec: AgentSpec) => void,
  now: Date,
): Promise<Agent> {
  const scope = { tenantId, agentId };
  const targetSpec = AgentSpec.strip().parse((await findAgent(db, tenantId, agentId, target.version)).agent);
  // The operator's model list may have changed since that version was made.
  validate(targetSpec);
  const version = await withTenant(db, tenantId, async (trx) => {
    const revised = await reviseAgent(
      trx,
      scope,
      (latest) => {
        requireActive(latest, agentId);
        return stableStringify(readSpec(latest.spec)) === stableStringify(targetSpec)
          ? null
          : { name: targetSpec.name, spec: targetSpec };
      },
      now,
    );
    if (revised === null) throw notFound("agent", agentId);
    if (target.applyToSessions) await repinSessions(trx, scope, revised.version);
    return revised.version;
  });
  return (await findAgent(db, tenantId, agentId, version)).agent;
}

/**
 * Archived agents start no new sessions; their versions stay readable. Their SQL database (db_sql, in
 * the agent SQL database) is dropped once the archive has committed, and db_sql refuses them from then
 * on; if that drop fails the call fails, and archiving again (otherwise a no-op) drops it.
 */
export async function archiveAgent(
  db: Kysely<Database>,
  agentSql: AgentSqlPool,
  tenantId: string,
  agentId: string,
  now: Date,
): Promise<Agent> {
  const archived = await withTenant(db, tenantId, async (trx) => {
    await trx
      .updateTable("agents")
      .set({ archived_at: now, updated_at: now })
      .where("tenant_id", "=", tenantId)
      .where("id", "=", agentId)
      .where("archived_at", "is", null)
      .execute();
    return (await findAgent(trx, tenantId, agentId)).agent;
  });
  await dropAgentSqlSchema(agentSql, { tenantId, agentId });
  return archived;
}
