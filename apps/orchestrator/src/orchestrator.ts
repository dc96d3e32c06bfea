import { type Bus, createOutboxRelay, ensureConsumer, ensureStreams } from "@wakeloop/bus";
import { type Database, expireIdempotencyKeys } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import type { OrchestratorConfig } from "./config";
import { runSweeper } from "./lease-sweeper";
import { runEvery } from "./periodic";
import { eventsConsumers, watchSessions } from "./session-watcher";

/**
 * Starts the orchestrator's loops: the outbox relay (committed events → JetStream), the session watcher
 * (events → wakes, terminated sessions → sandbox released), the lease sweeper (crashed wakes →
 * rescheduled) and retention (expired idempotency keys). `stop` ends them after the work in hand.
 */
export async function startOrchestrator(deps: {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  /** Releases terminated sessions' sandboxes; null when no sandbox-runner is deployed. */
  sandbox: SandboxClient | null;
  config: OrchestratorConfig;
}): Promise<{ stop(): Promise<void> }> {
  const { db, bus, log, sandbox, config } = deps;
  await ensureStreams(bus.jsm, bus.catalog);
  for (const consumer of eventsConsumers(bus)) await ensureConsumer(bus.jsm, consumer);
  const relay = createOutboxRelay({
    db,
    listenUrl: config.DATABASE_URL,
    js: bus.js,
    subjects: bus.subjects,
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
      { db, bus, log },
      {
        intervalMs: config.LEASE_SWEEP_INTERVAL_MS,
        maxAttempts: config.WAKE_MAX_ATTEMPTS,
        republishQueuedAfterMs: config.WAKE_REPUBLISH_AFTER_MS,
        maxWakesInFlight: config.WAKES_IN_FLIGHT_PER_TENANT,
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
