import type { Bus } from "@wakeloop/bus";
import { type Database, getSession, openWake, type WakeRow } from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely } from "kysely";
import { dispatchWakes } from "./wake-dispatch";

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
): Promise<WakeRow | null> {
  const session = await getSession(db, target.tenantId, target.sessionId);
  if (session === null) return null;
  const reason = wakeReason(session.state);
  if (reason === null) return null;
  const wake = await openWake(db, { tenantId: target.tenantId, sessionId: target.sessionId, reason });
  if (wake !== null) await dispatchWakes(db, bus, target.tenantId, maxInFlight);
  return wake;
}
