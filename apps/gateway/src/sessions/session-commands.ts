import type { SessionEvent, UpdateSessionRequest } from "@wakeloop/contracts";
import { append, type Database, type SessionRow, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";
import type { z } from "zod";
import { lockSession, sessionTerminated } from "./session-lock";
import { requireSession } from "./session-store";

/**
 * Session changes made through the API are events too (invariant 2): the projection changes only
 * when the event store folds them in.
 */

export async function updateSession(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  changes: z.output<typeof UpdateSessionRequest>,
  now: Date,
): Promise<SessionRow> {
  await withTenant(db, tenantId, async (trx) => {
    const { state } = await lockSession(trx, tenantId, sessionId);
    if (state.status === "terminated") throw sessionTerminated(state);
    await append(trx, { tenantId, sessionId, events: [{ type: "session.updated", ...changes }], now });
  });
  return requireSession(db, tenantId, sessionId);
}

/**
 * Terminates the session with reason `archived`. Archiving an archived session is a no-op; a session
 * that ended otherwise (completed, error) is archived on top, so the archive is on record.
 */
export async function archiveSession(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  now: Date,
): Promise<{ session: SessionRow; terminated: SessionEvent[] }> {
  const terminated = await withTenant(db, tenantId, async (trx) => {
    const { state } = await lockSession(trx, tenantId, sessionId);
    if (state.termination_reason === "archived") return [];
    return append(trx, {
      tenantId,
      sessionId,
      events: [{ type: "session.status_terminated", reason: "archived" }],
      now,
    });
  });
  return { session: await requireSession(db, tenantId, sessionId), terminated };
}
