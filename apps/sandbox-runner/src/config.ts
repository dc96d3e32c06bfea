import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { parseConfig, serviceEnv } from "@wakeloop/service-kit";
import { z } from "zod";

/** A runner id is a subject token and part of container names: letters, digits, _ and -. */
function defaultRunnerId(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9_-]/g, "-")
      .slice(0, 40) || "runner"
  );
}

/** Sandbox runner settings: the shared ones (Postgres, NATS, telemetry, health port) come from serviceEnv. */
export const SandboxRunnerEnv = serviceEnv({ healthPort: 9083 }).extend({
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
});
export type SandboxRunnerConfig = z.output<typeof SandboxRunnerEnv>;

export function loadConfig(): SandboxRunnerConfig {
  return parseConfig(SandboxRunnerEnv, process.env);
}
