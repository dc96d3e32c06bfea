import { textContent } from "@wakeloop/contracts";
import { append, type Database, type NewEvent, readSessionState, withTenant } from "@wakeloop/db";
import { INTERRUPTED_BEFORE_RUN, unrunCallIds } from "@wakeloop/session-core";
import type { Kysely } from "kysely";

/**
 * An interrupt that reaches a session no wake holds (idle, waiting on approvals or client results) is
 * applied here: every call that has not run — pending, or answered and not yet run — gets an `is_error`
 * result and the turn ends. A session with an open wake is left to the worker that holds it.
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
    // Calls an interrupt stopped can also be left over by a worker that idled before it saw the
    // interrupt; they are settled the same way.
    if (state.status !== "idle" || (!state.interrupt_requested && state.interrupted_call_ids.length === 0))
      return false;
    const openWake = await trx
      .selectFrom("wakes")
      .select("id")
      .where("session_id", "=", target.sessionId)
      .where("status", "in", ["queued", "running"])
      .executeTakeFirst();
    if (openWake !== undefined) return false;
    const events: NewEvent[] = unrunCallIds(state).map((id) => ({
      type: "agent.tool_result",
      tool_use_id: id,
      content: textContent(INTERRUPTED_BEFORE_RUN),
      is_error: true,
    }));
    events.push({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
    await append(trx, { tenantId: target.tenantId, sessionId: target.sessionId, events });
    return true;
  });
}
