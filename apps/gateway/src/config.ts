import { parseConfig, portNumber, serviceEnv, ToolSettingsEnv } from "@wakeloop/service-kit";
import { z } from "zod";

/** Gateway settings: the shared ones (Postgres, NATS, telemetry, health port) come from serviceEnv. */
export const GatewayEnv = serviceEnv({ healthPort: 9080 })
  .extend({
    HOST: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .describe("Address the public API binds; 0.0.0.0 in a container"),
    PORT: portNumber().default(8080).describe("Port of the public HTTP API and SSE streams"),
    GATEWAY_BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1_024)
      .default(1_048_576)
      .describe("Largest request body accepted; bigger ones get a 413 before they are parsed"),
    GATEWAY_BODY_DISCARD_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(8_388_608)
      .describe(
        "Of a body refused before it was read (413, 401), at most this much is read and dropped so the client sees the answer rather than a reset",
      ),
    GATEWAY_SSE_KEEPALIVE_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(15_000)
      .describe(
        "Idle event streams send a comment this often so proxies keep them open; each also re-checks Postgres",
      ),
  })
  .extend(ToolSettingsEnv.shape);
export type GatewayConfig = z.output<typeof GatewayEnv>;

export function loadConfig(): GatewayConfig {
  return parseConfig(GatewayEnv, process.env);
}

/** The database setting alone, for command-line tools that need nothing else. */
export function loadDatabaseUrl(): string {
  return parseConfig(GatewayEnv.pick({ DATABASE_URL: true }), process.env).DATABASE_URL;
}
