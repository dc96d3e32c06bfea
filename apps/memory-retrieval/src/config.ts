import { hostname } from "node:os";
import { MemoryLimitsEnv, parseConfig, serviceEnv } from "@wakeloop/service-kit";
import { z } from "zod";

/**
 * Memory retrieval settings: the shared ones (Postgres, NATS, telemetry, health port) come from
 * serviceEnv (health and metrics ports too), the store limits from MemoryLimitsEnv (the gateway reads the same ones).
 */
export const MemoryRetrievalEnv = serviceEnv({ healthPort: 9084, metricsPort: 9468 })
  .extend(MemoryLimitsEnv.shape)
  .extend({
    MEMORY_REPLICA_ID: z
      .string()
      .min(1)
      .max(64)
      .default(`${hostname()}-${process.pid}`)
      .describe("Names this replica in ping answers and logs; replicas share no state, so any id works"),
    INDEX_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(256)
      .default(16)
      .describe("Committed events this replica indexes for search at once"),
  });
export type MemoryRetrievalConfig = z.output<typeof MemoryRetrievalEnv>;

export function loadConfig(): MemoryRetrievalConfig {
  return parseConfig(MemoryRetrievalEnv, process.env);
}
