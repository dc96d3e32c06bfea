import { type Database, renewLease } from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";

/**
 * Renews the wake's lease every third of its ttl and tells JetStream the job is still being worked
 * on. A failed renewal (the sweeper re-queued the wake) aborts `lost`: every later append would be
 * refused by the fence anyway, this only stops the work sooner.
 */
export function keepLease(deps: {
  db: Kysely<Database>;
  log: Logger;
  tenantId: string;
  wakeId: string;
  epoch: number;
  ttlMs: number;
  working: () => void;
}): { lost: AbortSignal; stop(): void } {
  const lost = new AbortController();
  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = true;
      deps.working();
      renewLease(deps.db, {
        tenantId: deps.tenantId,
        wakeId: deps.wakeId,
        epoch: deps.epoch,
        ttlMs: deps.ttlMs,
      })
        .then((held) => {
          if (!held) {
            deps.log.warn({ wake_id: deps.wakeId }, "lease lost; stopping the wake");
            lost.abort(new Error("lease lost"));
          }
        })
        .catch((err: unknown) =>
          deps.log.warn({ err, wake_id: deps.wakeId }, "lease renewal failed; retrying"),
        )
        .finally(() => {
          renewing = false;
        });
    },
    Math.max(50, Math.floor(deps.ttlMs / 3)),
  );
  timer.unref();
  return { lost: lost.signal, stop: () => clearInterval(timer) };
}
