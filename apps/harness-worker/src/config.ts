import { hostname } from "node:os";

import { ProviderSettingsEnv, parseConfig, serviceEnv, ToolSettingsEnv } from "@wakeloop/service-kit";
import { z } from "zod";

const count = (min: number, fallback: number) => z.coerce.number().int().min(min).default(fallback);

/** Harness worker settings: the shared ones (Postgres, NATS, telemetry, health port) come from serviceEnv. */
export const HarnessWorkerEnv = serviceEnv({ healthPort: 9082 })
  .extend({
    WORKER_ID: z
      .string()
      .min(1)
      .default(`${hostname()}-${process.pid}`)
      .describe("Recorded on the wakes this worker holds, so an operator can tell whose lease expired"),
    WORKER_SLOTS: count(1, 4).describe("Wakes run at once by this process; scale out with more processes"),
    HISTORY_CACHE_EVENTS: count(0, 100_000).describe(
      "Events of recently run sessions kept in memory, so a session's next wake on this worker reads only what is new (0: none)",
    ),
    LEASE_TTL_MS: count(1_000, 15_000).describe(
      "A wake whose worker stops renewing for this long is rescheduled; renewed every third of it",
    ),
    MAX_MODEL_REQUESTS_PER_WAKE: count(1, 200).describe(
      "A runaway guard: a wake that made this many model requests ends its turn (loop detection stops most loops first)",
    ),
    MODEL_MAX_RETRIES: count(0, 4).describe(
      "Retries of one model request on overload, rate limits and failures",
    ),
    MODEL_RETRY_BASE_MS: count(1, 500).describe("First retry delay; doubles each retry, with full jitter"),
    MODEL_RETRY_MAX_MS: count(1, 30_000).describe(
      "Ceiling of one retry delay (a provider's retry-after wins)",
    ),
    MODEL_TIMEOUT_MS: count(1_000, 600_000).describe("One model request may take this long"),
    ANTHROPIC_API_KEY: z.string().optional().describe("For agents whose model provider is anthropic"),
    OPENAI_API_KEY: z.string().optional().describe("For agents whose model provider is openai"),
    OPENAI_COMPATIBLE_API_KEY: z
      .string()
      .optional()
      .describe(
        "For openai_compatible servers on OPENAI_COMPATIBLE_KEY_HOSTS that want a key (vLLM --api-key)",
      ),
    SANDBOX_ENABLED: z
      .enum(["true", "false"])
      .default("true")
      .transform((value) => value === "true")
      .describe("Whether a sandbox-runner is deployed; without one, sandbox tools are never offered"),
  })
  .extend(ToolSettingsEnv.shape)
  .extend(ProviderSettingsEnv.shape);
export type HarnessWorkerConfig = z.output<typeof HarnessWorkerEnv>;

export function loadConfig(): HarnessWorkerConfig {
  return parseConfig(HarnessWorkerEnv, process.env);
}
