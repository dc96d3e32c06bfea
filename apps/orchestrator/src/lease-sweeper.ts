import { type Bus, publishWakeJob } from "@wakeloop/bus";
import {
  type Database,
  exhaustExpiredWake,
  expiredLeases,
  rescheduleExpiredWake,
  staleQueuedWakes,
} from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import type { LeaseMetrics } from "./orchestrator-metrics";
import { runEvery } from "./periodic";
import { dispatchHeldWakes } from "./wake-dispatch";

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
    // A null outcome means the lease moved on (renewed, finished, another sweeper) since it was read.
    if (expired.attempt >= options.maxAttempts) {
      const failed = await exhaustExpiredWake(db, expired);
      if (failed === null) continue;
      exhausted += 1;
      log.error(
        { session_id: failed.session_id, wake_id: failed.id },
        "lease expired too often; retries exhausted",
      );
      continue;
    }
    const wake = await rescheduleExpiredWake(db, expired);
    if (wake === null) continue;
    requeued += 1;
    log.warn(
      { session_id: wake.session_id, wake_id: wake.id, attempt: wake.attempt },
      "lease expired; wake rescheduled",
    );
    await publishWakeJob(bus, wake);
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

/** Runs `sweepOnce` every `intervalMs` until the signal aborts. */
export function runSweeper(
  deps: { db: Kysely<Database>; bus: Bus; log: Logger; metrics: LeaseMetrics },
  options: SweeperOptions & { intervalMs: number; signal: AbortSignal },
): Promise<void> {
  return runEvery("lease sweep", options.intervalMs, options.signal, deps.log, async () => {
    const { requeued, exhausted } = await sweepOnce(deps, options, new Date());
    deps.metrics.expired(requeued, exhausted);
  });
}
