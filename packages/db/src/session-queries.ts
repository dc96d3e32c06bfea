import type { Budget, Metadata, SessionEvent } from "@wakeloop/contracts";
import { initialSessionState } from "@wakeloop/session-core";
import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, SessionEventsTable, SessionsTable } from "./database";
import { eventFromRow, type SessionRow, sessionFromRow } from "./event-rows";
import { newId } from "./ids";
import { withTenant } from "./tenant-scope";

export interface CreateSessionInput {
  tenantId: string;
  agentId: string;
  agentVersion: number;
  environmentId: string | null;
  parentSessionId: string | null;
  /** 0 (the default) for a root session; a sub-session's is its parent's + 1. */
  depth?: number;
  title: string | null;
  metadata: Metadata;
  budget: Budget;
  /** Another model of the agent's provider for this session (checked by `modelOverride`); the agent's when absent. */
  model?: string | null | undefined;
  now?: Date;
}

/** A new idle session with no events yet; the projection starts from `initialSessionState`. */
export async function createSession(db: Kysely<Database>, input: CreateSessionInput): Promise<SessionRow> {
  const [row] = await createSessions(db, input.tenantId, [input]);
  if (row === undefined) throw new Error("creating a session returned no row");
  return row;
}

/** New idle sessions of one tenant in one statement (a scheduled burst), in the order given. */
export async function createSessions(
  db: Kysely<Database>,
  tenantId: string,
  inputs: readonly Omit<CreateSessionInput, "tenantId">[],
): Promise<SessionRow[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map((input) => {
    const state = initialSessionState({ title: input.title, metadata: input.metadata, budget: input.budget });
    const now = input.now ?? new Date();
    return {
      id: newId("session"),
      tenant_id: tenantId,
      agent_id: input.agentId,
      agent_version: input.agentVersion,
      environment_id: input.environmentId,
      parent_session_id: input.parentSessionId,
      depth: input.depth ?? 0,
      model: input.model ?? null,
      status: state.status,
      state: JSON.stringify(state),
      last_seq: 0,
      created_at: now,
      updated_at: now,
    };
  });
  const created = await withTenant(db, tenantId, (trx) =>
    trx.insertInto("sessions").values(rows).returningAll().execute(),
  );
  const byId = new Map(created.map((row) => [row.id, sessionFromRow(row)]));
  return rows.map((row) => {
    const session = byId.get(row.id);
    if (session === undefined) throw new Error(`session ${row.id} was not created`);
    return session;
  });
}

/** The session as its tenant sees it, in one round trip (`wl_session`); null when there is none. */
export function getSession(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
): Promise<SessionRow | null> {
  return readSession(db, "wl_session", tenantId, sessionId);
}

/** A session through a tenant-scoped function answering `sessions` rows; null when it answers none. */
export async function readSession(
  db: Kysely<Database>,
  fn: "wl_session" | "wl_session_awaiting_wake",
  tenantId: string,
  sessionId: string,
): Promise<SessionRow | null> {
  const { rows } = await sql<
    Selectable<SessionsTable>
  >`SELECT * FROM ${sql.raw(fn)}(${tenantId}, ${sessionId})`.execute(db);
  const [row] = rows;
  return row === undefined ? null : sessionFromRow(row);
}

export interface ReadEventsInput {
  tenantId: string;
  sessionId: string;
  /** Events with a seq strictly greater than this; 0 reads from the start. */
  afterSeq?: number;
  limit?: number;
}

/**
 * Events in seq order, in one round trip (`wl_session_events`). An unknown session reads as empty;
 * check it with `getSession` first.
 */
export async function readEvents(db: Kysely<Database>, input: ReadEventsInput): Promise<SessionEvent[]> {
  const { rows } = await sql<Selectable<SessionEventsTable>>`SELECT * FROM wl_session_events(
    ${input.tenantId}, ${input.sessionId}, ${input.afterSeq ?? 0}::integer, ${input.limit ?? 1_000}::integer)`.execute(
    db,
  );
  return rows.map(eventFromRow);
}
