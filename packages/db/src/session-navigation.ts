import type { SessionStatus } from "@wakeloop/contracts";
import { type Kysely, type Selectable, sql } from "kysely";
import type { AgentScope } from "./agent-state";
import type { Database, SessionsTable, WakeStatus } from "./database";
import { type SessionRow, sessionFromRow } from "./event-rows";
import { withTenant } from "./tenant-scope";

/*
 * Reads for the session navigation tools: one agent's sessions, never another agent's or tenant's
 * (every query is tenant-scoped under row security and filtered on the agent). Each read is bounded
 * by its caller's limit; none writes.
 */

/** Where a listing stays relative to one session (openboa `lineage`). */
export type SessionLineage = "related" | "parent" | "children" | "siblings";

export interface NavigatedSession {
  session: SessionRow;
  /** The spec of the agent version the session is pinned to, and of its environment (stored JSON). */
  agentSpec: unknown;
  environmentSpec: unknown | null;
  childCount: number;
  hasOutcome: boolean;
}

export interface ListAgentSessionsInput extends AgentScope {
  status?: SessionStatus;
  hasOutcome?: boolean;
  /** Only sessions updated within this many minutes. */
  activeMinutes?: number;
  near?: { sessionId: string; parentSessionId: string | null; lineage: SessionLineage };
  /** Only the children of this session. */
  parentSessionId?: string;
  limit: number;
  afterId?: string;
}

type NavigationRow = Selectable<SessionsTable> & {
  agent_spec: unknown;
  environment_spec: unknown | null;
  child_count: string | number;
  has_outcome: boolean;
};

/** The session was given an outcome to work toward (`user.define_outcome` or `outcome_define`). */
const HAS_OUTCOME = sql<boolean>`(EXISTS (SELECT 1 FROM session_events o
  WHERE o.session_id = s.id AND o.type = 'user.define_outcome')
  OR EXISTS (SELECT 1 FROM outcomes o WHERE o.tenant_id = s.tenant_id AND o.session_id = s.id))`;

function selectNavigable(db: Kysely<Database>, scope: AgentScope) {
  return db
    .selectFrom("sessions as s")
    .innerJoin("agent_versions as v", (join) =>
      join
        .onRef("v.tenant_id", "=", "s.tenant_id")
        .onRef("v.agent_id", "=", "s.agent_id")
        .onRef("v.version", "=", "s.agent_version"),
    )
    .leftJoin("environments as e", (join) =>
      join.onRef("e.tenant_id", "=", "s.tenant_id").onRef("e.id", "=", "s.environment_id"),
    )
    .selectAll("s")
    .select((eb) => [
      "v.spec as agent_spec",
      "e.spec as environment_spec",
      eb
        .selectFrom("sessions as c")
        .select(eb.fn.countAll().as("n"))
        .whereRef("c.tenant_id", "=", "s.tenant_id")
        .whereRef("c.parent_session_id", "=", "s.id")
        .as("child_count"),
      HAS_OUTCOME.as("has_outcome"),
    ])
    .where("s.tenant_id", "=", scope.tenantId)
    .where("s.agent_id", "=", scope.agentId);
}

function toNavigated(row: NavigationRow): NavigatedSession {
  const { agent_spec, environment_spec, child_count, has_outcome, ...session } = row;
  return {
    session: sessionFromRow(session),
    agentSpec: agent_spec,
    environmentSpec: environment_spec,
    childCount: Number(child_count),
    hasOutcome: has_outcome,
  };
}

/** A page of the agent's sessions, newest first, and the id to continue after when there is more. */
export async function listAgentSessions(
  db: Kysely<Database>,
  input: ListAgentSessionsInput,
): Promise<{ sessions: NavigatedSession[]; nextAfterId: string | null }> {
  const rows = await withTenant(db, input.tenantId, (trx) => {
    let select = selectNavigable(trx, input)
      .orderBy("s.id", "desc")
      .limit(input.limit + 1);
    if (input.afterId !== undefined) select = select.where("s.id", "<", input.afterId);
    if (input.status !== undefined) select = select.where("s.status", "=", input.status);
    if (input.activeMinutes !== undefined) {
      select = select.where(
        "s.updated_at",
        ">=",
        sql<Date>`now() - make_interval(mins => ${input.activeMinutes})`,
      );
    }
    if (input.parentSessionId !== undefined)
      select = select.where("s.parent_session_id", "=", input.parentSessionId);
    if (input.hasOutcome !== undefined) {
      select = select.where(input.hasOutcome ? HAS_OUTCOME : sql<boolean>`NOT ${HAS_OUTCOME}`);
    }
    const near = input.near;
    if (near !== undefined) {
      select = select.where((eb) => {
        const parent = near.parentSessionId;
        const parentOf = parent === null ? eb.val(false) : eb("s.id", "=", parent);
        const children = eb("s.parent_session_id", "=", near.sessionId);
        const siblings =
          parent === null
            ? eb.val(false)
            : eb.and([eb("s.parent_session_id", "=", parent), eb("s.id", "<>", near.sessionId)]);
        switch (near.lineage) {
          case "parent":
            return parentOf;
          case "children":
            return children;
          case "siblings":
            return siblings;
          case "related":
            return eb.or([parentOf, children, siblings]);
        }
      });
    }
    return select.execute();
  });
  const page = rows.slice(0, input.limit) as NavigationRow[];
  return {
    sessions: page.map(toNavigated),
    nextAfterId: rows.length > input.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/** One session of the agent; null when it is another agent's, another tenant's, or none. */
export async function findAgentSession(
  db: Kysely<Database>,
  scope: AgentScope,
  sessionId: string,
): Promise<NavigatedSession | null> {
  const row = await withTenant(db, scope.tenantId, (trx) =>
    selectNavigable(trx, scope).where("s.id", "=", sessionId).executeTakeFirst(),
  );
  return row === undefined ? null : toNavigated(row as NavigationRow);
}

export interface SessionWake {
  id: string;
  status: WakeStatus;
  reason: string;
  attempt: number;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The session's wakes, newest first; only `wakeId` when given. */
export async function listSessionWakes(
  db: Kysely<Database>,
  input: { tenantId: string; sessionId: string; limit: number; wakeId?: string },
): Promise<SessionWake[]> {
  const rows = await withTenant(db, input.tenantId, (trx) => {
    let select = trx
      .selectFrom("wakes")
      .select(["id", "status", "reason", "attempt", "created_at", "finished_at"])
      .where("tenant_id", "=", input.tenantId)
      .where("session_id", "=", input.sessionId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(input.limit);
    if (input.wakeId !== undefined) select = select.where("id", "=", input.wakeId);
    return select.execute();
  });
  return rows.map((row) => ({
    id: row.id,
    status: row.status,
    reason: row.reason,
    attempt: row.attempt,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  }));
}

/** Characters of the session's stored event bodies: the size of its history without loading it. */
export async function sessionHistoryChars(
  db: Kysely<Database>,
  input: { tenantId: string; sessionId: string },
): Promise<number> {
  const row = await withTenant(db, input.tenantId, (trx) =>
    trx
      .selectFrom("session_events")
      .select(sql<string>`coalesce(sum(length(body::text)), 0)`.as("chars"))
      .where("tenant_id", "=", input.tenantId)
      .where("session_id", "=", input.sessionId)
      .executeTakeFirstOrThrow(),
  );
  return Number(row.chars);
}
