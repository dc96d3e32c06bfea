import type Docker from "dockerode";
import { LABEL } from "./labels";
import type { RunnerLog } from "./runner-log";
import { removeContainer } from "./sandbox-container";
import type { SandboxNetworks } from "./sandbox-network";
import type { Binding, SessionStore } from "./session-store";
import type { WorkspaceDisks } from "./workspace-disks";

export type Adopted = { binding: Binding; container: "running" | "stopped" | "missing" };

/**
 * Start-up after a crash or restart: every container labelled with this runner id is either adopted
 * (a session's container named by a binding file) or removed (pool containers, which hold no session
 * state, and orphans of a crash mid-provisioning). Bindings whose container is gone stay: the
 * workspace still holds the session's files and the next call re-creates a container. Workspaces go
 * the same way: a bound one is mounted again (after a host reboot only its image is left), any other
 * is unmounted and deleted. So do sandbox networks and their firewall rules.
 */
export async function reconcile(args: {
  docker: Docker;
  runnerId: string;
  store: SessionStore;
  networks: SandboxNetworks;
  workspaces: WorkspaceDisks;
  log: RunnerLog;
}): Promise<Adopted[]> {
  const { docker, runnerId, store, networks, workspaces, log } = args;
  const filters = JSON.stringify({ label: [`${LABEL.runner}=${runnerId}`] });
  const bindings = await store.allBindings();
  const byContainer = new Map(bindings.map((binding) => [binding.container_id, binding]));
  const containers = await docker.listContainers({ all: true, filters });

  const adopted: Adopted[] = [];
  const seen = new Set<string>();
  for (const info of containers) {
    const binding = byContainer.get(info.Id);
    if (binding) {
      seen.add(binding.session_id);
      adopted.push({ binding, container: info.State === "running" ? "running" : "stopped" });
      continue;
    }
    log.info({ containerId: info.Id, names: info.Names }, "removing unclaimed sandbox container");
    await removeContainer(docker, info.Id);
  }
  for (const binding of bindings) {
    if (!seen.has(binding.session_id)) adopted.push({ binding, container: "missing" });
  }

  // After the containers: a removed container no longer holds its workspace's filesystem.
  await workspaces.reconcile(new Set(bindings.map((binding) => binding.workspace_volume)));
  const keptNetworks = bindings.flatMap((binding) => (binding.network === null ? [] : [binding.network]));
  await networks.reconcile(new Set(keptNetworks));
  return adopted;
}
