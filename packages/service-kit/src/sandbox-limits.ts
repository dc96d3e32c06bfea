import { type EnvironmentConfig, WakeloopError } from "@wakeloop/contracts";
import { z } from "zod";
import { envCount } from "./service-env";

/**
 * The operator's bounds on sandboxes. The gateway refuses an environment over them when it is saved
 * and the sandbox runner refuses it again at `ensure`, so both read them from the same variables:
 * deploy both with the same values.
 */
export const SandboxLimitsEnv = z.object({
  SANDBOX_ALLOW_NETWORK: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true")
    .describe(
      "Whether tenants may choose network: bridge (an isolated per-sandbox network); otherwise only none",
    ),
  SANDBOX_ALLOWED_IMAGES: z
    .string()
    .default("wakeloop-sandbox:bookworm,wakeloop-sandbox-browser:bookworm")
    .transform((value) =>
      value
        .split(",")
        .map((image) => image.trim())
        .filter((image) => image !== ""),
    )
    .pipe(z.array(z.string()).min(1))
    .describe("Comma-separated images environments may run; anything else is refused"),
  SANDBOX_MAX_CPUS: z.coerce
    .number()
    .positive()
    .default(2)
    .describe("Largest cpus an environment may ask for"),
  SANDBOX_MAX_MEMORY_MB: envCount(32, 2_048).describe("Largest memory_mb an environment may ask for"),
  SANDBOX_MAX_PIDS: envCount(16, 512).describe("Largest pids_limit an environment may ask for"),
  SANDBOX_MAX_WARM_POOL_SIZE: envCount(0, 2).describe(
    "Largest warm_pool_size an environment may ask for (idle containers held per pool)",
  ),
  SANDBOX_MAX_WORKSPACE_MB: envCount(16, 4_096).describe(
    "Largest workspace_mb an environment may ask for (each session's /workspace is a filesystem of that size on the runner's host)",
  ),
});
export type SandboxLimitsConfig = z.output<typeof SandboxLimitsEnv>;

/** The bounds as packages take them (options, not variables). */
export type SandboxLimits = {
  allowNetwork: boolean;
  allowedImages: readonly string[];
  maxCpus: number;
  maxMemoryMb: number;
  maxPids: number;
  maxWarmPoolSize: number;
  maxWorkspaceMb: number;
};

export function sandboxLimits(config: SandboxLimitsConfig): SandboxLimits {
  return {
    allowNetwork: config.SANDBOX_ALLOW_NETWORK,
    allowedImages: config.SANDBOX_ALLOWED_IMAGES,
    maxCpus: config.SANDBOX_MAX_CPUS,
    maxMemoryMb: config.SANDBOX_MAX_MEMORY_MB,
    maxPids: config.SANDBOX_MAX_PIDS,
    maxWarmPoolSize: config.SANDBOX_MAX_WARM_POOL_SIZE,
    maxWorkspaceMb: config.SANDBOX_MAX_WORKSPACE_MB,
  };
}

export type SandboxLimitViolation = { field: keyof EnvironmentConfig; limit: string; message: string };

/** Every way `environment` goes past the operator's bounds; empty when it fits. */
export function sandboxLimitViolations(
  environment: EnvironmentConfig,
  limits: SandboxLimits,
): SandboxLimitViolation[] {
  const violations: SandboxLimitViolation[] = [];
  const over = (field: keyof EnvironmentConfig, limit: string, value: number, max: number) => {
    if (value > max)
      violations.push({ field, limit, message: `${field} ${value} is over ${limit} (${max})` });
  };
  over("cpus", "SANDBOX_MAX_CPUS", environment.cpus, limits.maxCpus);
  over("memory_mb", "SANDBOX_MAX_MEMORY_MB", environment.memory_mb, limits.maxMemoryMb);
  over("pids_limit", "SANDBOX_MAX_PIDS", environment.pids_limit, limits.maxPids);
  over("warm_pool_size", "SANDBOX_MAX_WARM_POOL_SIZE", environment.warm_pool_size, limits.maxWarmPoolSize);
  over("workspace_mb", "SANDBOX_MAX_WORKSPACE_MB", environment.workspace_mb, limits.maxWorkspaceMb);
  if (environment.network !== "none" && !limits.allowNetwork) {
    violations.push({
      field: "network",
      limit: "SANDBOX_ALLOW_NETWORK",
      message: `network ${environment.network} is not allowed on this platform (SANDBOX_ALLOW_NETWORK); use none`,
    });
  }
  if (!limits.allowedImages.includes(environment.image)) {
    violations.push({
      field: "image",
      limit: "SANDBOX_ALLOWED_IMAGES",
      message: `image ${environment.image} is not on SANDBOX_ALLOWED_IMAGES (${limits.allowedImages.join(", ")})`,
    });
  }
  return violations;
}

/** Throws `sandbox_limit_exceeded` (a 400 on the API) naming every limit `environment` goes past. */
export function assertSandboxLimits(environment: EnvironmentConfig, limits: SandboxLimits): void {
  const violations = sandboxLimitViolations(environment, limits);
  if (violations.length === 0) return;
  throw new WakeloopError("sandbox_limit_exceeded", violations.map((v) => v.message).join("; "), {
    details: { violations },
  });
}
