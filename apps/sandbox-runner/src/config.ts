import { isIPv4 } from "node:net";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import {
  envCount,
  parseConfig,
  SandboxLimitsEnv,
  SubstrateLimitsEnv,
  serviceEnv,
} from "@wakeloop/service-kit";
import { z } from "zod";

/** A runner id is a subject token and part of container names: letters, digits, _ and -. */
function defaultRunnerId(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9_-]/g, "-")
      .slice(0, 40) || "runner"
  );
}

/**
 * Sandbox runner settings: the shared ones (Postgres, NATS, telemetry, health and metrics ports) come from
 * serviceEnv, the operator's sandbox bounds from SandboxLimitsEnv and the substrate bounds from
 * SubstrateLimitsEnv (the gateway reads the same ones).
 */
export const SandboxRunnerEnv = serviceEnv({ healthPort: 9083, metricsPort: 9467 })
  .extend(SandboxLimitsEnv.shape)
  .extend(SubstrateLimitsEnv.shape)
  .extend({
    SANDBOX_RUNNER_ID: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,40}$/)
      .default(defaultRunnerId())
      .describe(
        "Stable across restarts: labels this runner's containers (adopted after a restart) and names its subjects",
      ),
    SANDBOX_STATE_DIR: z
      .string()
      .min(1)
      .default(join(homedir(), ".wakeloop", "sandbox-runner"))
      .describe(
        "Host directory for session bindings, shell state and the tool-call journal; must survive restarts",
      ),
    SANDBOX_IDLE_STOP_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(600_000)
      .describe("A sandbox without calls for this long is stopped to free memory; its next call restarts it"),
    DOCKER_SOCKET: z
      .string()
      .min(1)
      .default("/var/run/docker.sock")
      .describe("Docker Engine API socket; only this service talks to Docker and no sandbox ever sees it"),
    SANDBOX_MAX_PER_TENANT: envCount(1, 16).describe(
      "Sandboxes one tenant may hold on this runner at once (running or idle-stopped, until released)",
    ),
    SANDBOX_NOFILE: envCount(64, 1_024).describe("Open files per sandbox process (the nofile ulimit)"),
    SANDBOX_POOL_IDLE_MS: envCount(1_000, 900_000).describe(
      "A warm pool no session registered or claimed for this long is dropped with its containers",
    ),
    SANDBOX_MAX_POOLS: envCount(0, 8).describe(
      "Warm pools (one per distinct environment) held at once; further environments start cold",
    ),
    SANDBOX_DNS_SERVERS: z
      .string()
      .default("")
      .transform((value) =>
        value
          .split(",")
          .map((server) => server.trim())
          .filter((server) => server !== ""),
      )
      .pipe(z.array(z.string().refine(isIPv4, "must be an IPv4 address")))
      .describe(
        "Comma-separated resolvers that sandboxes with a network may reach on port 53; all other private addresses are fenced off",
      ),
  });
export type SandboxRunnerConfig = z.output<typeof SandboxRunnerEnv>;

export function loadConfig(): SandboxRunnerConfig {
  return parseConfig(SandboxRunnerEnv, process.env);
}
