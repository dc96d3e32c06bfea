import { type Bus, publishWakeJob } from "@wakeloop/bus";
import { type Database, getSession, type QueuedWakeJob, type SessionRow, scheduleWake } from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely } from "kysely";

/**
 * Opens a wake when the session has work and none is open, then publishes its tenant's held wakes as
 * far as its in-flight limit allows. The wake row is the truth: a wake held back is published when one
 * of its tenant's wakes ends, and a lost publish is repaired by the sweeper, so nothing waits forever.
 */
export async function scheduleIfNeeded(
  db: Kysely<Database>,
  bus: Bus,
  target: { tenantId: string; sessionId: string },
  maxInFlight: number,
  /** The session as the caller just read it, if it did. */
  read?: SessionRow | null,
): Promise<QueuedWakeJob | null> {
  // Two round trips: the session's state (the reason is the reducer's, in TypeScript), then the wake
  // opened and its tenant's publishable wakes claimed in one call.
  const session = read === undefined ? await getSession(db, target.tenantId, target.sessionId) : read;
  const reason = session === null ? null : wakeReason(session.state);
  if (session === null || reason === null) return null;
  const { opened, claimed } = await scheduleWake(db, { ...target, reason, maxInFlight });
  for (const job of claimed) {
    await publishWakeJob(
      bus,
      job.session_id === target.sessionId ? { ...job, agent_id: session.agent_id } : job,
    );
  }
  return opened;
}
