import { parseConfig, serviceEnv, WakeLimitsEnv } from "@wakeloop/service-kit";
import { z } from "zod";

/** Orchestrator settings: the shared ones (Postgres, NATS, telemetry, health and metrics ports) come from serviceEnv. */
export const OrchestratorEnv = serviceEnv({ healthPort: 9081, metricsPort: 9465 })
  .extend({
    EVENT_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .default(16)
      .describe("Committed events decided on at once; each decision is one short Postgres round trip"),
    OUTBOX_RELAY_LINGER_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000)
      .default(10)
      .describe(
        "Under sustained load the outbox relay waits this long between rounds to publish larger batches (fewer statements per event, up to this much more lag); 0 never waits",
      ),
    LEASE_SWEEP_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(50)
      .default(1_000)
      .describe("How often expired wake leases are looked for; a crashed wake resumes within ttl + this"),
    WAKE_MAX_ATTEMPTS: z.coerce
      .number()
      .int()
      .min(1)
      .default(3)
      .describe("Workers a wake may lose before the session idles with retries_exhausted"),
    IDEMPOTENCY_KEY_TTL_MS: z.coerce
      .number()
      .int()
      .min(60_000)
      .default(24 * 3_600_000)
      .describe(
        "How long a client may retry a POST with the same Idempotency-Key and get the recorded answer",
      ),
    RETENTION_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(300_000)
      .describe("How often expired records (idempotency keys) are deleted"),
    WAKE_REPUBLISH_AFTER_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(15_000)
      .describe("A wake queued this long without a worker has its job published again (e.g. NATS was wiped)"),
    SCHEDULE_POLL_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(50)
      .default(1_000)
      .describe("How often due reminders and scheduled tasks are looked for; a firing is at most this late"),
    SCHEDULE_BATCH_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(100)
      .describe("Due schedules locked and fired in one transaction"),
    SCHEDULE_FIRE_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(32)
      .default(4)
      .describe("Batches of one tenant's due schedules this replica fires at once"),
    SCHEDULE_CATCH_UP_WINDOW_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(3_600_000)
      .describe(
        "After downtime a cron task fires once if an occurrence was missed within this window, else skips",
      ),
    SANDBOX_ENABLED: z
      .enum(["true", "false"])
      .default("true")
      .transform((value) => value === "true")
      .describe("Whether a sandbox-runner is deployed; with one, a terminated session's sandbox is released"),
  })
  .extend(WakeLimitsEnv.shape);
export type OrchestratorConfig = z.output<typeof OrchestratorEnv>;

export function loadConfig(): OrchestratorConfig {
  return parseConfig(OrchestratorEnv, process.env);
}
