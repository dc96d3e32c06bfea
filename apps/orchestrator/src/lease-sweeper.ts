import type { Bus } from "@wakeloop/bus";
import {
  append,
  type Database,
  type ExpiredLease,
  expiredLeases,
  requeueWake,
  staleQueuedWakes,
  type WakeRow,
  withTenant,
} from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import { runEvery } from "./periodic";
import { dispatchHeldWakes, publishWakeJob } from "./wake-dispatch";

export interface SweeperOptions {
  /** A wake that lost its worker this many times ends with `retries_exhausted`. */
  maxAttempts: number;
  /** A queued wake older than this is republished (its job may be gone, e.g. after NATS was wiped). */
  republishQueuedAfterMs: number;
  /** Each tenant's limit of wakes in flight; held wakes are published as far as it allows. */
  maxWakesInFlight: number;
}

/**
 * Recovers wakes whose worker stopped renewing its lease (DESIGN §3 step 7): re-queue with attempt+1
 * and `session.status_rescheduled`, or give up with `retries_exhausted` after `maxAttempts`. Runs in
 * every orchestrator replica; each re-queue is a conditional update, so two sweepers never both act.
 */
export async function sweepOnce(
  deps: { db: Kysely<Database>; bus: Bus; log: Logger },
  options: SweeperOptions,
  now: Date,
): Promise<{ requeued: number; exhausted: number; republished: number; dispatched: number }> {
  const { db, bus, log } = deps;
  let requeued = 0;
  let exhausted = 0;
  for (const expired of await expiredLeases(db, now)) {
    const outcome = await recoverWake(db, expired, options.maxAttempts);
    if (outcome === null) continue;
    if (outcome.status === "queued") {
      requeued += 1;
      log.warn(
        { session_id: outcome.session_id, wake_id: outcome.id, attempt: outcome.attempt },
        "lease expired; wake rescheduled",
      );
      await publishWakeJob(bus, outcome);
    } else {
      exhausted += 1;
      log.error(
        { session_id: outcome.session_id, wake_id: outcome.id },
        "lease expired too often; retries exhausted",
      );
    }
  }
  let republished = 0;
  // Held wakes have no job yet (the dispatch publishes them); only published ones are republished.
  const stale = await staleQueuedWakes(db, new Date(now.getTime() - options.republishQueuedAfterMs));
  for (const wake of stale) {
    // Same msg id as the first publish: JetStream drops it if that one is still known.
    await publishWakeJob(bus, wake);
    republished += 1;
  }
  const dispatched = await dispatchHeldWakes(db, bus, options.maxWakesInFlight);
  return { requeued, exhausted, republished, dispatched };
}

async function recoverWake(
  db: Kysely<Database>,
  expired: ExpiredLease,
  maxAttempts: number,
): Promise<WakeRow | null> {
  const expectedEpoch = expired.lease_epoch;
  return withTenant(db, expired.tenant_id, async (trx) => {
    const target = { tenantId: expired.tenant_id, sessionId: expired.session_id };
    if (expired.attempt >= maxAttempts) {
      // Session row first, then the wake row: the lock order every writer follows.
      await trx
        .selectFrom("sessions")
        .select("id")
        .where("id", "=", expired.session_id)
        .forUpdate()
        .execute();
      const failed = await trx
        .updateTable("wakes")
        .set({ status: "failed", lease_expires_at: null, finished_at: new Date() })
        .where("id", "=", expired.id)
        .where("status", "=", "running")
        .where("lease_epoch", "=", expectedEpoch)
        .returningAll()
        .executeTakeFirst();
      if (failed === undefined) return null;
      await trx
        .updateTable("sessions")
        .set((eb) => ({ lease_epoch: eb("lease_epoch", "+", 1) }))
        .where("id", "=", expired.session_id)
        .execute();
      await append(trx, {
        ...target,
        events: [
          {
            type: "session.error",
            wake_id: expired.id,
            error: {
              type: "lease_lost",
              message: `the wake lost its worker ${expired.attempt} times`,
              retry_status: { type: "exhausted" },
            },
          },
          { type: "session.status_idle", wake_id: expired.id, stop_reason: { type: "retries_exhausted" } },
        ],
      });
      return failed;
    }
    const wake = await requeueWake(trx, { tenantId: expired.tenant_id, wakeId: expired.id, expectedEpoch });
    if (wake === null) return null;
    await append(trx, { ...target, events: [{ type: "session.status_rescheduled", wake_id: wake.id }] });
    return wake;
  });
}

/** Runs `sweepOnce` every `intervalMs` until the signal aborts. */
export function runSweeper(
  deps: { db: Kysely<Database>; bus: Bus; log: Logger },
  options: SweeperOptions & { intervalMs: number; signal: AbortSignal },
): Promise<void> {
  return runEvery("lease sweep", options.intervalMs, options.signal, deps.log, async () => {
    await sweepOnce(deps, options, new Date());
  });
}
