import { randomBytes } from "node:crypto";
import { type EnvironmentConfig, WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import type { AgentProgram } from "./agent-program";
import { LABEL } from "./labels";
import type { RunnerLog } from "./runner-log";
import { removeVolume, SandboxContainer } from "./sandbox-container";

export type ProvisionRequest = {
  name: string;
  labels: Record<string, string>;
  environment: EnvironmentConfig;
  substrateVolume: string | null;
  /** Reuse this workspace volume (a session whose container is gone); otherwise a new one is made. */
  workspaceVolume?: string;
};

export type Provisioned = { container: SandboxContainer; workspaceVolume: string };

function isMissingImage(error: unknown): boolean {
  const e = error as { statusCode?: number; message?: string };
  return e.statusCode === 404 && /image/i.test(e.message ?? "");
}

/** Creates (not starts) a hardened container with its workspace volume; cleans up on failure. */
export async function provisionContainer(
  docker: Docker,
  agent: AgentProgram,
  request: ProvisionRequest,
  log: RunnerLog,
): Promise<Provisioned> {
  const createdVolume = request.workspaceVolume === undefined;
  const workspaceVolume = request.workspaceVolume ?? `wl-ws-${randomBytes(8).toString("hex")}`;
  if (createdVolume) {
    await docker.createVolume({
      Name: workspaceVolume,
      Labels: { ...request.labels, [LABEL.kind]: "workspace" },
    });
  }
  try {
    const container = await SandboxContainer.create(
      docker,
      {
        name: request.name,
        labels: { ...request.labels, [LABEL.kind]: "sandbox", [LABEL.agentVersion]: agent.version },
        environment: request.environment,
        workspaceVolume,
        substrateVolume: request.substrateVolume,
        agent,
      },
      log,
    );
    return { container, workspaceVolume };
  } catch (error) {
    if (createdVolume) await removeVolume(docker, workspaceVolume).catch(() => undefined);
    if (isMissingImage(error)) {
      throw new WakeloopError(
        "sandbox_image_missing",
        `image ${request.environment.image} is not on this Docker host; build it with: bash infra/sandbox-image.sh`,
        { cause: error },
      );
    }
    throw new WakeloopError(
      "sandbox_create_failed",
      `could not create the sandbox container: ${(error as Error).message}`,
      {
        cause: error,
        retryable: true,
      },
    );
  }
}

/** The substrate volume of an agent: shared by its sessions, read-only in them, never removed here. */
export async function ensureSubstrateVolume(
  docker: Docker,
  name: string,
  tenantId: string,
  agentId: string,
): Promise<void> {
  try {
    await docker.getVolume(name).inspect();
  } catch {
    await docker.createVolume({
      Name: name,
      Labels: { [LABEL.substrate]: agentId, [LABEL.tenant]: tenantId, [LABEL.kind]: "substrate" },
    });
  }
}
