import type { Bus } from "@wakeloop/bus";
import { type Database, getSession, openWake, type QueuedWakeJob, type WakeRow } from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely } from "kysely";

/** The wake job's msg id: a re-queued wake is a new delivery, so the attempt is part of it. */
export function wakeJobMsgId(wake: Pick<WakeRow, "id" | "attempt">): string {
  return `${wake.id}:${wake.attempt}`;
}

export async function publishWakeJob(bus: Bus, wake: QueuedWakeJob): Promise<void> {
  await bus.publish(
    bus.catalog.wakes,
    [wake.tenant_id, wake.session_id],
    {
      wake_id: wake.id,
      tenant_id: wake.tenant_id,
      session_id: wake.session_id,
      attempt: wake.attempt,
      reason: wake.reason,
    },
    { msgId: wakeJobMsgId(wake) },
  );
}

/**
 * Opens a wake when the session has work and none is open, then publishes its job. The wake row is the
 * truth: if the publish is lost, the sweeper republishes queued wakes, so nothing waits forever.
 */
export async function scheduleIfNeeded(
  db: Kysely<Database>,
  bus: Bus,
  target: { tenantId: string; sessionId: string },
): Promise<WakeRow | null> {
  const session = await getSession(db, target.tenantId, target.sessionId);
  if (session === null) return null;
  const reason = wakeReason(session.state);
  if (reason === null) return null;
  const wake = await openWake(db, { tenantId: target.tenantId, sessionId: target.sessionId, reason });
  if (wake !== null) await publishWakeJob(bus, wake);
  return wake;
}
