import { type Database, fireDueSchedules, tenantsWithDueSchedules } from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import { runEvery } from "./periodic";

export interface ScheduleFirerOptions {
  /** Schedules locked and fired per transaction. */
  batchSize: number;
  /** Batches of one tenant fired at once (each takes rows the others do not hold). */
  concurrency: number;
  /** Cron occurrences older than this when seen are skipped (docs/scheduling.md). */
  catchUpWindowMs: number;
}

/**
 * Fires every schedule due by `now` (reminders into their sessions, tasks into fresh sessions), in
 * batches per tenant until none is left. Runs in every replica: `fireDueSchedules` locks rows with
 * SKIP LOCKED, so replicas share the work and each occurrence fires once. The messages it appends
 * wake their sessions through the session watcher, like any client's message.
 */
export async function fireSchedulesOnce(
  deps: { db: Kysely<Database>; log: Logger },
  options: ScheduleFirerOptions,
  now: Date,
): Promise<number> {
  const { db, log } = deps;
  let fired = 0;
  for (const tenantId of await tenantsWithDueSchedules(db, now, 1_000)) {
    const drain = async (): Promise<void> => {
      for (;;) {
        const firings = await fireDueSchedules(db, {
          tenantId,
          now,
          limit: options.batchSize,
          catchUpWindowMs: options.catchUpWindowMs,
        });
        fired += firings.length;
        for (const firing of firings) {
          log.debug(
            {
              tenant_id: tenantId,
              schedule_id: firing.scheduleId,
              session_id: firing.sessionId,
              occurrence_at: firing.occurrenceAt.toISOString(),
              outcome: firing.outcome,
            },
            "schedule occurrence handled",
          );
        }
        if (firings.length < options.batchSize) return;
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, drain));
  }
  if (fired > 0) log.info({ fired }, "due schedules fired");
  return fired;
}

/** Runs `fireSchedulesOnce` every `intervalMs` until the signal aborts. */
export function runScheduleFirer(
  deps: { db: Kysely<Database>; log: Logger },
  options: ScheduleFirerOptions & { intervalMs: number; signal: AbortSignal },
): Promise<void> {
  return runEvery("schedule firing", options.intervalMs, options.signal, deps.log, async () => {
    await fireSchedulesOnce(deps, options, new Date());
  });
}
