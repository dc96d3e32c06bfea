import type { Kysely } from "kysely";
import type { AgentScope } from "./agent-state";
import type { Database } from "./database";
import { withTenant } from "./tenant-scope";

/*
 * Agent versions are immutable (`agent_versions`, migration 0002); `agents.latest_version` names the
 * newest. Every new version — an owner's update or rollback, an agent editing its own prompt — is made
 * here, under a lock of the agent row, so concurrent writers get consecutive versions and none is lost.
 */

export interface AgentVersionRecord {
  version: number;
  /** The stored spec JSON; callers read it through their schema. */
  spec: unknown;
  createdAt: Date;
}

export interface LatestAgentVersion extends AgentVersionRecord {
  archived: boolean;
}

/** A spec to store as the next version; `name` is mirrored on the agent row. */
export interface AgentRevision {
  name: string;
  spec: unknown;
}

/** One version of the agent, the latest when `version` is omitted; null when either does not exist. */
export function readAgentVersion(
  db: Kysely<Database>,
  scope: AgentScope,
  version?: number,
): Promise<AgentVersionRecord | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("agents as a")
      .innerJoin("agent_versions as v", (join) =>
        join.onRef("v.agent_id", "=", "a.id").onRef("v.tenant_id", "=", "a.tenant_id"),
      )
      .select(["v.version", "v.spec", "v.created_at"])
      .where("a.tenant_id", "=", scope.tenantId)
      .where("a.id", "=", scope.agentId)
      .where((eb) =>
        version === undefined
          ? eb("v.version", "=", eb.ref("a.latest_version"))
          : eb("v.version", "=", version),
      )
      .executeTakeFirst();
    return row === undefined ? null : { version: row.version, spec: row.spec, createdAt: row.created_at };
  });
}

/**
 * Makes the agent's next version from its latest one: `revise` sees the latest (locked, so nobody
 * writes in between) and returns the spec to store, or null to store nothing (the latest stays).
 * Returns the resulting latest version, or null when the tenant has no such agent. `revise` may throw
 * to refuse (an archived agent, an invalid spec); nothing is written then.
 */
export function reviseAgent(
  db: Kysely<Database>,
  scope: AgentScope,
  revise: (latest: LatestAgentVersion) => AgentRevision | null,
  now: Date,
): Promise<{ version: number; spec: unknown; createdAt: Date; created: boolean } | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const locked = await trx
      .selectFrom("agents")
      .select(["latest_version", "archived_at"])
      .where("tenant_id", "=", scope.tenantId)
      .where("id", "=", scope.agentId)
      .forUpdate()
      .executeTakeFirst();
    if (locked === undefined) return null;
    const latest = await readAgentVersion(trx, scope, locked.latest_version);
    if (latest === null) return null;
    const revision = revise({ ...latest, archived: locked.archived_at !== null });
    if (revision === null) return { ...latest, created: false };

    const version = locked.latest_version + 1;
    await trx
      .updateTable("agents")
      .set({ latest_version: version, name: revision.name, updated_at: now })
      .where("tenant_id", "=", scope.tenantId)
      .where("id", "=", scope.agentId)
      .execute();
    await trx
      .insertInto("agent_versions")
      .values({
        agent_id: scope.agentId,
        version,
        tenant_id: scope.tenantId,
        spec: JSON.stringify(revision.spec),
        created_at: now,
      })
      .execute();
    return { version, spec: revision.spec, createdAt: now, created: true };
  });
}

/**
 * Moves sessions of the agent onto another version of it, from each one's next wake (the lease reads
 * the pinned version's spec): the one session named (the session whose agent edited its own prompt is
 * the one that asked to run with the edit), or every unfinished session (an owner's rollback that
 * applies to sessions). Returns how many moved; a session of another agent or tenant never moves.
 */
export async function repinSessions(
  db: Kysely<Database>,
  scope: AgentScope & { sessionId?: string },
  version: number,
): Promise<number> {
  const result = await withTenant(db, scope.tenantId, (trx) => {
    let update = trx
      .updateTable("sessions")
      .set({ agent_version: version })
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("agent_version", "<>", version);
    update =
      scope.sessionId === undefined
        ? update.where("status", "<>", "terminated")
        : update.where("id", "=", scope.sessionId);
    return update.executeTakeFirst();
  });
  return Number(result.numUpdatedRows);
}
