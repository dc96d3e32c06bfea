import { textContent } from "@wakeloop/contracts";
import { INTERRUPTED_BEFORE_RUN, unrunCallIds } from "@wakeloop/session-core";
import type { Kysely } from "kysely";
import type { Database } from "./database";
import { appendInTx, type NewEvent } from "./event-store";
import { readSessionState } from "./json-readers";
import { withTenant } from "./tenant-scope";

/**
 * Settles an interrupt that reached a session no wake holds (idle, waiting on approvals or client
 * results): every call that has not run — pending, or answered and not yet run — gets an `is_error`
 * result and the turn ends. A session with an open wake is left to the worker that holds it. The check
 * and the append share one transaction under the session row lock, so a wake opened or an event
 * appended concurrently is seen either before the check or after the settlement, never in between.
 * True when it appended.
 */
export function settleIdleInterrupt(
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
    await appendInTx(trx, { tenantId: target.tenantId, sessionId: target.sessionId, events });
    return true;
  });
}
