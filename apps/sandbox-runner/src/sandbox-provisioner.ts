import type { SandboxEnsureRequest, SandboxProvisioning } from "@wakeloop/contracts";
import type Docker from "dockerode";
import { LABEL, sessionContainerName } from "./labels";
import { poolKey } from "./pool-key";
import { type ProvisionDeps, type Provisioned, provisionContainer } from "./provision";
import { reconcile } from "./reconcile";
import { removeContainer, SandboxContainer } from "./sandbox-container";
import type { HeldSandbox, SandboxRegistry } from "./sandbox-registry";
import type { SandboxStatus } from "./sandbox-status";
import type { Binding, SessionStore } from "./session-store";
import type { ShellStatePersistence } from "./shell-state";
import type { TenantQuota } from "./tenant-quota";
import type { WarmPool } from "./warm-pool";

/** What a binding says about the session, whichever container it is bound to. */
type SessionPart = Omit<Binding, "container_id" | "workspace_volume" | "network">;

function bindingOf(session: SessionPart, provisioned: Provisioned): Binding {
  return {
    ...session,
    container_id: provisioned.container.id,
    workspace_volume: provisioned.workspace,
    network: provisioned.network,
  };
}

export type SandboxProvisionerDeps = {
  provision: ProvisionDeps;
  runnerId: string;
  registry: SandboxRegistry;
  status: SandboxStatus;
  store: SessionStore;
  shells: ShellStatePersistence;
  quota: TenantQuota;
  pool: WarmPool;
};

/**
 * Gives sessions their containers: adoption of this runner's containers at start-up, a new sandbox
 * (claimed from the warm pool, or created cold) within the tenant's quota, and the revival of a held
 * one whose container stopped or is gone.
 */
export class SandboxProvisioner {
  private readonly docker: Docker;

  constructor(private readonly deps: SandboxProvisionerDeps) {
    this.docker = deps.provision.docker;
  }

  /** Holds this runner's bound sandboxes again; running ones are re-attached (the agent kept its shells). */
  async adopt(): Promise<void> {
    const { provision, registry, status, runnerId, store } = this.deps;
    const adopted = await reconcile({
      docker: this.docker,
      runnerId,
      store,
      networks: provision.networks,
      workspaces: provision.workspaces,
      log: provision.log,
    });
    for (const { binding, container: state } of adopted) {
      const container =
        state === "missing" ? null : new SandboxContainer(this.docker, binding.container_id, provision.log);
      const sandbox = registry.hold(binding, container, "closed");
      if (container && state === "running") {
        try {
          status.watch(sandbox, await container.connect());
          sandbox.status = "ready";
        } catch (error) {
          provision.log.warn({ err: error, sessionId: binding.session_id }, "adopted sandbox did not answer");
          sandbox.status = "error";
        }
      }
    }
  }

  /** A sandbox for a session this runner does not hold yet, counted against its tenant's quota. */
  async create(
    request: SandboxEnsureRequest,
  ): Promise<{ sandbox: HeldSandbox; provisioning: SandboxProvisioning }> {
    const done = this.deps.quota.reserve(request.tenant_id);
    try {
      return await this.provision(request);
    } finally {
      done();
    }
  }

  /** Brings back a stopped sandbox, or re-creates its container over the kept workspace. */
  async revive(sandbox: HeldSandbox): Promise<SandboxProvisioning> {
    const { provision, status, store, shells } = this.deps;
    const binding = sandbox.binding;
    const workspaceExists = await provision.workspaces.exists(binding.workspace_volume);
    if (workspaceExists && sandbox.container && (await this.exists(binding.container_id))) {
      // Mounted before the start: the container binds whatever is at the mount point when it starts.
      await provision.workspaces.mount(binding.workspace_volume);
      status.watch(sandbox, await sandbox.container.connect());
      await shells.restore(binding.session_id, sandbox.container);
      return "restarted";
    }
    const name = sessionContainerName(this.deps.runnerId, binding.session_id);
    await removeContainer(this.docker, name);
    if (sandbox.container) await removeContainer(this.docker, binding.container_id);
    if (binding.network !== null) await provision.networks.remove(binding.network);
    const provisioned = await provisionContainer(provision, {
      name,
      labels: this.labels(binding.session_id, binding.tenant_id),
      environment: binding.environment,
      substrate: binding.substrate_volume,
      ...(workspaceExists ? { workspace: binding.workspace_volume } : {}),
    });
    sandbox.binding = bindingOf(binding, provisioned);
    sandbox.container = provisioned.container;
    await store.saveBinding(sandbox.binding);
    status.watch(sandbox, await provisioned.container.connect());
    await shells.restore(binding.session_id, sandbox.container);
    return "cold";
  }

  private async provision(
    request: SandboxEnsureRequest,
  ): Promise<{ sandbox: HeldSandbox; provisioning: SandboxProvisioning }> {
    const { provision, pool, runnerId } = this.deps;
    const environment = request.environment;
    // The mirror is synced before the container exists: Docker binds the directory at create time.
    const substrate =
      request.agent_id && provision.substrates
        ? await provision.substrates.sync({ tenantId: request.tenant_id, agentId: request.agent_id })
        : null;
    const key = poolKey(environment, substrate, provision.agent.version);
    if (environment.warm_pool_size > 0) pool.register(key, environment, substrate);
    const bindingBase = {
      tenant_id: request.tenant_id,
      session_id: request.session_id,
      agent_id: request.agent_id ?? null,
      environment,
      substrate_volume: substrate,
    };
    const name = sessionContainerName(runnerId, request.session_id);
    const claimed = pool.claim(key);
    if (claimed) {
      const sandbox = await this.hold(bindingBase, claimed);
      // The name is for people reading `docker ps`; the binding file is what adoption trusts, so the
      // rename (tens of ms in Docker) stays off the claim's path.
      void removeContainer(this.docker, name)
        .then(() => claimed.container.container.rename({ name }))
        .catch(() => undefined);
      return { sandbox, provisioning: "warm" };
    }
    await removeContainer(this.docker, name); // left by a crash before its binding was written
    const provisioned = await provisionContainer(provision, {
      name,
      labels: this.labels(request.session_id, request.tenant_id),
      environment,
      substrate,
    });
    const sandbox = await this.hold(bindingBase, provisioned);
    this.deps.status.watch(sandbox, await provisioned.container.connect());
    return { sandbox, provisioning: "cold" };
  }

  private labels(sessionId: string, tenantId: string): Record<string, string> {
    return { [LABEL.runner]: this.deps.runnerId, [LABEL.session]: sessionId, [LABEL.tenant]: tenantId };
  }

  /** Writes the session's binding to `provisioned` and holds the sandbox (still `provisioning`). */
  private async hold(base: SessionPart, provisioned: Provisioned): Promise<HeldSandbox> {
    const binding = bindingOf(base, provisioned);
    await this.deps.store.saveBinding(binding);
    const sandbox = this.deps.registry.hold(binding, provisioned.container, "provisioning");
    if (provisioned.container.channel) this.deps.status.watch(sandbox, provisioned.container.channel);
    return sandbox;
  }

  private async exists(containerId: string): Promise<boolean> {
    try {
      await this.docker.getContainer(containerId).inspect();
      return true;
    } catch {
      return false;
    }
  }
}
