import { type Bus, publishWakeJob } from "@wakeloop/bus";
import {
  claimWakesToPublish,
  type Database,
  type QueuedWakeJob,
  type SessionRow,
  scheduleWake,
  sessionAwaitingWake,
} from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely } from "kysely";

/**
 * Opens a wake when the session has work and none is open, then publishes its tenant's held wakes as
 * far as its in-flight limit allows. The wake row is the truth: a wake held back is published when one
 * of its tenant's wakes ends, and a lost publish is repaired by the sweeper, so nothing waits forever.
 *
 * This is the backstop for every event that can give a session work, whoever committed it: a client's
 * events usually have their wake opened by the gateway in their own commit, and then the session's
 * read finds it open (or already over) and nothing else is done; sub-session answers, child
 * completions and scheduled messages are woken here.
 */
export async function scheduleIfNeeded(
  db: Kysely<Database>,
  bus: Bus,
  target: { tenantId: string; sessionId: string },
  maxInFlight: number,
  /** The session as the caller just read it, if it did. */
  read?: SessionRow | null,
): Promise<QueuedWakeJob | null> {
  // One round trip when the session has an open wake or needs none: its read, skipped when a wake is
  // open (the reason is the reducer's, in TypeScript). Else the wake opened and its tenant's
  // publishable wakes claimed in one call, and again once that committed if it was held.
  const session =
    read === undefined ? await sessionAwaitingWake(db, target.tenantId, target.sessionId) : read;
  const reason = session === null ? null : wakeReason(session.state);
  if (session === null || reason === null) return null;
  const { opened, claimed, held } = await scheduleWake(db, { ...target, reason, maxInFlight });
  const again = held ? await claimWakesToPublish(db, { tenantId: target.tenantId, maxInFlight }) : [];
  for (const job of [...claimed, ...again]) {
    await publishWakeJob(
      bus,
      job.session_id === target.sessionId ? { ...job, agent_id: session.agent_id } : job,
    );
  }
  return opened;
}
