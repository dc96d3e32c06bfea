import { createHash } from "node:crypto";
import type { EnvironmentConfig } from "@wakeloop/contracts";

/**
 * Containers are interchangeable when everything fixed at creation is equal: image, limits,
 * network, mounts, workspace size and the agent program. Exec policy and timeouts apply per call, so environments
 * that differ only there share a pool.
 */
export function poolKey(
  environment: EnvironmentConfig,
  substrate: string | null,
  agentVersion: string,
): string {
  const fixed = {
    image: environment.image,
    cpus: environment.cpus,
    memory_mb: environment.memory_mb,
    pids_limit: environment.pids_limit,
    network: environment.network,
    workspace_access: environment.workspace_access,
    workspace_mb: environment.workspace_mb,
    substrate,
    agentVersion,
  };
  return createHash("sha256").update(JSON.stringify(fixed)).digest("hex").slice(0, 16);
}
