import { type SessionState, textContent } from "@wakeloop/contracts";
import { INTERRUPTED_BEFORE_RUN, unrunCallIds } from "@wakeloop/session-core";
import type { Kysely } from "kysely";
import type { Database } from "./database";
import { append, type NewEvent } from "./event-store";
import { readSessionState } from "./json-readers";
import { withTenant } from "./tenant-scope";

/** Idle, and either interrupted or left with calls an interrupt stopped (a worker idled before it saw it). */
export function needsSettling(state: SessionState): boolean {
  return state.status === "idle" && (state.interrupt_requested || state.interrupted_call_ids.length > 0);
}

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
    const session = (forUpdate: boolean) => {
      const query = trx
        .selectFrom("sessions")
        .select("state")
        .where("tenant_id", "=", target.tenantId)
        .where("id", "=", target.sessionId);
      return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
    };
    // Every turn's `session.status_idle` asks, and almost none has anything to settle: a first read
    // without the row lock keeps those from blocking the append of the client's next message, which
    // typically arrives right then (issue #9, dispatch tail). Only a session that needs it is locked
    // and checked again.
    const seen = await session(false);
    if (seen === undefined || !needsSettling(readSessionState(seen.state))) return false;
    const locked = await session(true);
    if (locked === undefined) return false;
    const state = readSessionState(locked.state);
    if (!needsSettling(state)) return false;
    const openWake = await trx
      .selectFrom("wakes")
      .select("id")
      .where("session_id", "=", target.sessionId)
      .where("status", "in", ["queued", "running"])
      .executeTakeFirst();
    if (openWake !== undefined) return false;
    const unrun = unrunCallIds(state);
    // An MCP call is answered in kind (`agent.mcp_tool_result`); the projection keeps only the ids.
    const mcp =
      unrun.length === 0
        ? new Set<string>()
        : new Set(
            (
              await trx
                .selectFrom("session_events")
                .select("id")
                .where("session_id", "=", target.sessionId)
                .where("id", "in", unrun)
                .where("type", "=", "agent.mcp_tool_use")
                .execute()
            ).map((row) => row.id),
          );
    const content = textContent(INTERRUPTED_BEFORE_RUN);
    const events: NewEvent[] = unrun.map((id) =>
      mcp.has(id)
        ? { type: "agent.mcp_tool_result", mcp_tool_use_id: id, content, is_error: true }
        : { type: "agent.tool_result", tool_use_id: id, content, is_error: true },
    );
    events.push({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
    await append(trx, { tenantId: target.tenantId, sessionId: target.sessionId, events });
    return true;
  });
}
