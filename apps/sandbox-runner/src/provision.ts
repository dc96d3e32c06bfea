import { type EnvironmentConfig, WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import type { AgentProgram } from "./agent-program";
import { LABEL } from "./labels";
import type { RunnerLog } from "./runner-log";
import { SandboxContainer } from "./sandbox-container";
import type { SandboxNetworks } from "./sandbox-network";
import type { SubstrateMirror } from "./substrate-mirror";
import { WorkspaceDisks } from "./workspace-disks";

/** What provisioning needs from the runner: Docker, the agent, workspaces, the network fence and host limits. */
export type ProvisionDeps = {
  docker: Docker;
  agent: AgentProgram;
  workspaces: WorkspaceDisks;
  networks: SandboxNetworks;
  /** Mirrors of agent substrates; null when this runner has none to mount (no database). */
  substrates: SubstrateMirror | null;
  /** Open files per sandbox process. */
  nofile: number;
  log: RunnerLog;
};

export type ProvisionRequest = {
  name: string;
  labels: Record<string, string>;
  environment: EnvironmentConfig;
  /** The agent's substrate mirror (SubstrateMirror name), mounted read-only at /workspace/agent. */
  substrate: string | null;
  /** Reuse this workspace (a session whose container is gone); otherwise a new one is made. */
  workspace?: string;
};

export type Provisioned = {
  container: SandboxContainer;
  /** The name of its workspace (WorkspaceDisks), mounted at /workspace. */
  workspace: string;
  /** The sandbox's own network, removed with its container; null for `network: none`. */
  network: string | null;
};

function isMissingImage(error: unknown): boolean {
  const e = error as { statusCode?: number; message?: string };
  return e.statusCode === 404 && /image/i.test(e.message ?? "");
}

/**
 * Creates (not starts) a hardened container with its workspace (a filesystem of `workspace_mb`,
 * mounted before the container can start) and, when the environment may reach the network, its own
 * fenced network; cleans up what it created on failure.
 */
export async function provisionContainer(
  deps: ProvisionDeps,
  request: ProvisionRequest,
): Promise<Provisioned> {
  const { docker, agent, workspaces } = deps;
  const createdWorkspace = request.workspace === undefined;
  const workspace = request.workspace ?? WorkspaceDisks.newName();
  let network: string | null = null;
  try {
    if (createdWorkspace) await workspaces.create(workspace, request.environment.workspace_mb);
    else await workspaces.mount(workspace);
    if (request.environment.network !== "none") network = await deps.networks.create(request.labels);
    const container = await SandboxContainer.create(
      docker,
      {
        name: request.name,
        labels: { ...request.labels, [LABEL.kind]: "sandbox", [LABEL.agentVersion]: agent.version },
        environment: request.environment,
        workspacePath: workspaces.mountPath(workspace),
        substrateDir:
          request.substrate === null || deps.substrates === null
            ? null
            : deps.substrates.dir(request.substrate),
        agent,
        network,
        nofile: deps.nofile,
      },
      deps.log,
    );
    return { container, workspace, network };
  } catch (error) {
    if (network !== null) await deps.networks.remove(network).catch(() => undefined);
    if (createdWorkspace) await workspaces.remove(workspace).catch(() => undefined);
    if (error instanceof WakeloopError) throw error;
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
