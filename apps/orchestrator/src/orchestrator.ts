import { type Bus, createOutboxRelay, ensureConsumer, ensureStreams } from "@wakeloop/bus";
import { type Database, expireIdempotencyKeys } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { Logger, Meter } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import type { OrchestratorConfig } from "./config";
import { runSweeper } from "./lease-sweeper";
import { createLeaseMetrics, observeWakeQueue } from "./orchestrator-metrics";
import { runEvery } from "./periodic";
import { runScheduleFirer } from "./schedule-firer";
import { eventsConsumers, watchSessions } from "./session-watcher";

/**
 * Starts the orchestrator's loops: the outbox relay (committed events → JetStream), the session watcher
 * (events → wakes, terminated sessions → sandbox released), the lease sweeper (crashed wakes →
 * rescheduled), the schedule firer (due reminders and tasks → messages) and retention (expired
 * idempotency keys). `stop` ends them after the work in hand.
 */
export async function startOrchestrator(deps: {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  meter: Meter;
  /** Releases terminated sessions' sandboxes; null when no sandbox-runner is deployed. */
  sandbox: SandboxClient | null;
  config: OrchestratorConfig;
}): Promise<{ stop(): Promise<void> }> {
  const { db, bus, log, meter, sandbox, config } = deps;
  await ensureStreams(bus.jsm, bus.catalog);
  for (const consumer of eventsConsumers(bus)) await ensureConsumer(bus.jsm, consumer);
  observeWakeQueue(meter, bus, log);
  const relay = createOutboxRelay({
    db,
    listenUrl: config.DATABASE_URL,
    bus,
    lingerMs: config.OUTBOX_RELAY_LINGER_MS,
    onError: (err) => log.warn({ err }, "outbox relay recovered from an error"),
  });
  await relay.start();
  const stopping = new AbortController();
  const loops = Promise.all([
    watchSessions({
      db,
      bus,
      log,
      sandbox,
      concurrency: config.EVENT_CONCURRENCY,
      maxWakesInFlight: config.WAKES_IN_FLIGHT_PER_TENANT,
      signal: stopping.signal,
    }),
    runSweeper(
      { db, bus, log, metrics: createLeaseMetrics(meter) },
      {
        intervalMs: config.LEASE_SWEEP_INTERVAL_MS,
        maxAttempts: config.WAKE_MAX_ATTEMPTS,
        republishQueuedAfterMs: config.WAKE_REPUBLISH_AFTER_MS,
        maxWakesInFlight: config.WAKES_IN_FLIGHT_PER_TENANT,
        signal: stopping.signal,
      },
    ),
    runScheduleFirer(
      { db, log },
      {
        intervalMs: config.SCHEDULE_POLL_INTERVAL_MS,
        batchSize: config.SCHEDULE_BATCH_SIZE,
        concurrency: config.SCHEDULE_FIRE_CONCURRENCY,
        catchUpWindowMs: config.SCHEDULE_CATCH_UP_WINDOW_MS,
        signal: stopping.signal,
      },
    ),
    runEvery("retention", config.RETENTION_INTERVAL_MS, stopping.signal, log, async () => {
      const expired = await expireIdempotencyKeys(db, new Date(), config.IDEMPOTENCY_KEY_TTL_MS);
      if (expired > 0) log.info({ expired }, "expired idempotency keys deleted");
    }),
  ]);
  return {
    async stop() {
      stopping.abort();
      await loops;
      await relay.stop();
    },
  };
}
