import type { QueuedWakeJob, WakeRow } from "@wakeloop/db";
import type { Bus } from "./connect";

/** The wake job's msg id: a re-queued wake is a new delivery, so the attempt is part of it. */
export function wakeJobMsgId(wake: Pick<WakeRow, "id" | "attempt">): string {
  return `${wake.id}:${wake.attempt}`;
}

/** A wake to publish, with its session's agent when the publisher knows it (see `WakeJob.agent_id`). */
export type WakeJobToPublish = QueuedWakeJob & { agent_id?: string };

/**
 * Publishes the job of a wake marked published in Postgres. The wake row is the truth: a publish that
 * is lost is repeated by the orchestrator's sweeper with the same msg id.
 */
export async function publishWakeJob(bus: Bus, wake: WakeJobToPublish): Promise<void> {
  await bus.publish(
    bus.catalog.wakes,
    [wake.tenant_id, wake.session_id],
    {
      wake_id: wake.id,
      tenant_id: wake.tenant_id,
      session_id: wake.session_id,
      attempt: wake.attempt,
      reason: wake.reason,
      ...(wake.agent_id !== undefined && { agent_id: wake.agent_id }),
    },
    { msgId: wakeJobMsgId(wake) },
  );
}
