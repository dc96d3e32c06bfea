import { fileURLToPath } from "node:url";
import {
  MemoryLimitsEnv,
  ProviderSettingsEnv,
  parseConfig,
  portNumber,
  SandboxLimitsEnv,
  SubstrateLimitsEnv,
  serviceEnv,
  ToolSettingsEnv,
  WakeLimitsEnv,
} from "@wakeloop/service-kit";
import { z } from "zod";

/** A positive token count, or unset: an empty variable counts as unset. */
const optionalTokens = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z.coerce.number().int().positive().optional(),
);

/** Gateway settings: the shared ones (Postgres, NATS, telemetry, health and metrics ports) come from serviceEnv. */
export const GatewayEnv = serviceEnv({ healthPort: 9080, metricsPort: 9464 })
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
    GATEWAY_RATE_LIMIT_REQUESTS: z.coerce
      .number()
      .int()
      .min(0)
      .default(6_000)
      .describe("Requests one API key may make per window on each gateway replica (429 past it); 0 is off"),
    GATEWAY_RATE_LIMIT_WINDOW_S: z.coerce
      .number()
      .int()
      .min(1)
      .default(60)
      .describe("The window GATEWAY_RATE_LIMIT_REQUESTS counts over, in seconds"),
    GATEWAY_MAX_STREAMS_PER_KEY: z.coerce
      .number()
      .int()
      .min(1)
      .default(20)
      .describe("Open event streams one API key may hold on each gateway replica (429 past it)"),
    GATEWAY_MAX_OPEN_SESSIONS_PER_TENANT: z.coerce
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe(
        "Sessions a tenant may have that are not terminated, across replicas (429 past it); 0 is off",
      ),
    AGENT_SQL_ADMIN_URL: z
      .string()
      .url()
      .optional()
      .describe(
        "The app role on the agent SQL database, where archiving an agent drops its db_sql database; by default DATABASE_URL on database <name>_agents",
      ),
    GATEWAY_CONSOLE_DIR: z
      .string()
      .default(fileURLToPath(new URL("../../console/dist", import.meta.url)))
      .describe(
        "The built web console served at /console (apps/console/dist, from src/ and from dist/ alike); empty serves none",
      ),
    GATEWAY_DEFAULT_BUDGET_TOKENS: optionalTokens.describe(
      "Token budget of an agent created without one (never above the cap); unset: the cap, else unlimited",
    ),
    GATEWAY_MAX_BUDGET_TOKENS: optionalTokens.describe(
      "Largest token budget a tenant may set (a bigger one, or unlimited, is a 400); unset: no cap",
    ),
  })
  .extend(ToolSettingsEnv.shape)
  .extend(ProviderSettingsEnv.shape)
  .extend(SandboxLimitsEnv.shape)
  .extend(MemoryLimitsEnv.shape)
  .extend(SubstrateLimitsEnv.shape)
  .extend(WakeLimitsEnv.shape);
export type GatewayConfig = z.output<typeof GatewayEnv>;

export function loadConfig(): GatewayConfig {
  return parseConfig(GatewayEnv, process.env);
}

/** The tenant CLI's database: the migration owner's, since the services' role may not create tenants. */
const TenantCliEnv = z.object({
  OWNER_DATABASE_URL: z
    .url()
    .default("postgres://postgres@127.0.0.1:5432/wakeloop")
    .describe("The migration owner's url (infra/up.sh's database on this machine by default)"),
});

/** The owner's database url alone, for the tenant CLI that needs nothing else. */
export function loadOwnerDatabaseUrl(): string {
  return parseConfig(TenantCliEnv, process.env).OWNER_DATABASE_URL;
}
