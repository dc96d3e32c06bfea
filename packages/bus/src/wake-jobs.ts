import type { QueuedWakeJob, WakeRow } from "@wakeloop/db";
import type { Bus } from "./connect";

/** The wake job's msg id: a re-queued wake is a new delivery, so the attempt is part of it. */
export function wakeJobMsgId(wake: Pick<WakeRow, "id" | "attempt">): string {
  return `${wake.id}:${wake.attempt}`;
}

/**
 * Publishes the job of a wake marked published in Postgres. The wake row is the truth: a publish that
 * is lost is repeated by the orchestrator's sweeper with the same msg id.
 */
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
