import type { Bus } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import {
  answerWaits,
  cascadeToChildren,
  completeChildSession,
  type Database,
  finishChildRun,
  startChildRuns,
  surfaceChildApprovals,
} from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";

/**
 * What the orchestrator owns of sub-sessions (DESIGN §2), driven by the events it already follows:
 * - a parent's interrupt interrupts its running children, a parent's end archives them;
 * - a child that ended, or stopped on its budget or retries, tells its parent once
 *   (`session.child_completed`), which answers the parent's `wait_for_sessions` when it was the last;
 * - a parent that paused on `wait_for_sessions` for children that had already finished is answered;
 * - a parent that paused on `session_run_child` starts that run, and the run's sub-session answers it
 *   when its turn ends, it waits on a person, finishes or uses the run's model requests;
 * - a sub-session that waits on a person tells its ancestors (`session.child_requires_action`).
 * Every step re-reads Postgres under row locks, so repeated or reordered deliveries change nothing.
 * Returns the parent a finished child told: the budget it held for the child came back, so a parent
 * stopped on `budget_reached` may have work again (the caller checks).
 */
export async function followSubSessions(
  deps: { db: Kysely<Database>; bus: Bus; log: Logger },
  event: SessionEvent,
  target: { tenantId: string; sessionId: string; isChild: boolean },
): Promise<string | null> {
  const { db, bus, log } = deps;
  if (event.type === "user.interrupt" || event.type === "session.status_terminated") {
    const cascaded = await cascadeToChildren(
      db,
      target,
      event.type === "user.interrupt" ? "interrupt" : "end",
    );
    for (const stop of cascaded) {
      // The stop is durable already; the control message only makes a running child's worker stop now.
      bus.publishControl({ type: "interrupt", session_id: stop.session_id, event_id: stop.id });
    }
    if (cascaded.length > 0) {
      log.info(
        { session_id: target.sessionId, children: cascaded.length, cause: event.type },
        "cascaded to sub-sessions",
      );
    }
  }
  if (event.type !== "session.status_idle" && event.type !== "session.status_terminated") return null;
  // A session's parent never changes, so a root session has no run or parent to tell.
  const run = target.isChild ? await finishChildRun(db, target) : null;
  if (run) log.info({ session_id: target.sessionId, status: run }, "sub-session run over");
  const finished = target.isChild ? await completeChildSession(db, target) : null;
  if (finished) log.info({ session_id: target.sessionId, status: finished.status }, "sub-session finished");
  if (event.type === "session.status_idle" && event.stop_reason.type === "requires_action") {
    await answerWaits(db, target);
    await startChildRuns(db, target);
    // A sub-session's approvals show on its ancestors' streams, where they can be answered too.
    await surfaceChildApprovals(db, target, event.id);
  }
  return finished?.parentSessionId ?? null;
}
