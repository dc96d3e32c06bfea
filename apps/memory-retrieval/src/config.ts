import { parseConfig, serviceEnv } from "@wakeloop/service-kit";
import type { z } from "zod";

/** Memory retrieval settings: the shared ones (Postgres, NATS, telemetry, health port) come from serviceEnv. */
export const MemoryRetrievalEnv = serviceEnv({ healthPort: 9084 });
export type MemoryRetrievalConfig = z.output<typeof MemoryRetrievalEnv>;

export function loadConfig(): MemoryRetrievalConfig {
  return parseConfig(MemoryRetrievalEnv, process.env);
}
