import type { ListSessionsQuery, Session } from "@wakeloop/contracts";
import { type Database, getSession, type SessionRow, sessionFromRow, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";
import type { z } from "zod";
import { notFound } from "../http/api-error";
import { toSession } from "./session-view";

/** The tenant's session, or a 404: another tenant's session is indistinguishable from none. */
export async function requireSession(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
): Promise<SessionRow> {
  const row = await getSession(db, tenantId, sessionId);
  if (row === null) throw notFound("session", sessionId);
  return row;
}

export async function listSessions(
  db: Kysely<Database>,
  tenantId: string,
  query: z.output<typeof ListSessionsQuery>,
): Promise<{ data: Session[]; next_after_id: string | null }> {
  const rows = await withTenant(db, tenantId, (trx) => {
    let select = trx
      .selectFrom("sessions")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .orderBy("id", "desc")
      .limit(query.limit + 1);
    if (query.after_id !== undefined) select = select.where("id", "<", query.after_id);
    if (query.status !== undefined) select = select.where("status", "=", query.status);
    if (query.agent_id !== undefined) select = select.where("agent_id", "=", query.agent_id);
    if (query.parent_session_id !== undefined)
      select = select.where("parent_session_id", "=", query.parent_session_id);
    return select.execute();
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map((row) => toSession(sessionFromRow(row))),
    next_after_id: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
  };
}
