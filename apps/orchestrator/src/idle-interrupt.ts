import { textContent } from "@wakeloop/contracts";
import { appendInTx, type Database, type NewEvent, readSessionState, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";

export const INTERRUPTED_RESULT =
  "The user interrupted the session before this call was answered; it did not run.";

/**
 * An interrupt that reaches a session no wake holds (idle, waiting on approvals or client results) is
 * applied here: every pending call gets an `is_error` result and the turn ends. A session with an open
 * wake is left to the worker that holds it.
 */
export async function applyIdleInterrupt(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string },
): Promise<boolean> {
  return withTenant(db, target.tenantId, async (trx) => {
    const session = await trx
      .selectFrom("sessions")
      .select(["state"])
      .where("tenant_id", "=", target.tenantId)
      .where("id", "=", target.sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (session === undefined) return false;
    const state = readSessionState(session.state);
    if (state.status !== "idle" || !state.interrupt_requested) return false;
    const openWake = await trx
      .selectFrom("wakes")
      .select("id")
      .where("session_id", "=", target.sessionId)
      .where("status", "in", ["queued", "running"])
      .executeTakeFirst();
    if (openWake !== undefined) return false;
    const events: NewEvent[] = state.pending_actions.map((action) => ({
      type: "agent.tool_result",
      tool_use_id: action.event_id,
      content: textContent(INTERRUPTED_RESULT),
      is_error: true,
    }));
    events.push({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
    await appendInTx(trx, { tenantId: target.tenantId, sessionId: target.sessionId, events });
    return true;
  });
}
