import type { Bus } from "@wakeloop/bus";
import {
  claimWakesToPublish,
  type Database,
  getSession,
  openWake,
  type WakeRow,
  withTenant,
} from "@wakeloop/db";
import { wakeReason } from "@wakeloop/session-core";
import type { Kysely } from "kysely";
import { publishWakeJob } from "./wake-dispatch";

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
  // One tenant-scoped transaction reads the session, opens the wake and claims what may be published:
  // three statements on one connection instead of three transactions on the dispatch path.
  const { wake, claimed } = await withTenant(db, target.tenantId, async (trx) => {
    const session = await getSession(trx, target.tenantId, target.sessionId);
    const reason = session === null ? null : wakeReason(session.state);
    if (reason === null) return { wake: null, claimed: [] };
    const opened = await openWake(trx, { tenantId: target.tenantId, sessionId: target.sessionId, reason });
    if (opened === null) return { wake: null, claimed: [] };
    return {
      wake: opened,
      claimed: await claimWakesToPublish(trx, { tenantId: target.tenantId, maxInFlight }),
    };
  });
  for (const job of claimed) await publishWakeJob(bus, job);
  return wake;
}
