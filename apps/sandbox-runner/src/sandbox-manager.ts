import {
  type SandboxDescribeResponse,
  type SandboxEnsureRequest,
  type SandboxEnsureResponse,
  type SandboxExecuteCompleted,
  SandboxExecuteRequest,
  type SandboxExecuteResponse,
  type SandboxProvisioning,
  type SandboxStatusNotice,
  type SandboxStatusValue,
  WakeloopError,
} from "@wakeloop/contracts";
import { checkExec } from "@wakeloop/sandbox-client";
import { assertSandboxLimits, type SandboxLimits } from "@wakeloop/service-kit";
import type Docker from "dockerode";
import type { AgentChannel } from "./agent-channel";
import { type AgentProgram, agentProgram } from "./agent-program";
import { CallJournal } from "./call-journal";
import type { ApprovalCheck } from "./committed-allow";
import { SUBSTRATE_MOUNT, WORKSPACE } from "./container-spec";
import { KeyedMutex } from "./keyed-mutex";
import { LABEL, sessionContainerName, substrateVolumeName } from "./labels";
import { poolKey } from "./pool-key";
import { ensureSubstrateVolume, type ProvisionDeps, provisionContainer } from "./provision";
import { reconcile } from "./reconcile";
import type { RunnerLog } from "./runner-log";
import { removeContainer, SandboxContainer } from "./sandbox-container";
import { SandboxFirewall } from "./sandbox-firewall";
import { SandboxNetworks } from "./sandbox-network";
import { type Binding, SessionStore } from "./session-store";
import { TenantQuota } from "./tenant-quota";
import { failure, type ToolOutcome } from "./tools/output-format";
import { runTool } from "./tools/run-tool";
import { WarmPool } from "./warm-pool";
import { WorkspaceDisks } from "./workspace-disks";

export type SandboxManagerOptions = {
  docker: Docker;
  /** Stable across restarts: it labels this runner's containers and names its pinned subjects. */
  runnerId: string;
  /** Host directory for bindings, shell state, the idempotency journal and the workspace images. */
  stateDir: string;
  /** A sandbox with no call for this long is stopped (its workspace and binding stay). */
  idleStopMs: number;
  log: RunnerLog;
  onStatus?: (notice: SandboxStatusNotice) => void;
  /** The operator's bounds, checked again here at every ensure (the gateway checked them on save). */
  limits: SandboxLimits;
  /** Sandboxes one tenant may hold on this runner at once (running or stopped, until released). */
  maxSandboxesPerTenant: number;
  /** Open files per sandbox process. */
  nofile: number;
  /** A warm pool nobody registered or claimed for this long is dropped. */
  poolIdleMs: number;
  /** Warm pools (distinct environments) held at once; more environments start cold. */
  maxPools: number;
  /** Resolvers that sandboxes with a network may reach on port 53 (everything private is fenced off). */
  dnsServers: readonly string[];
  /** Asked before a call sent as `approved` runs: is its allow really committed? */
  approvals: ApprovalCheck;
};

type Sandbox = {
  binding: Binding;
  container: SandboxContainer | null;
  status: SandboxStatusValue;
  lastUsedAt: number;
  inflight: number;
};

/** Policy settings apply per call, so an `ensure` with a changed environment updates them in place. */
const PER_CALL_SETTINGS = ["exec_security", "exec_ask", "exec_allowlist", "command_timeout_ms"] as const;

/** Owns this runner's sandboxes: provisioning, warm claims, restarts, idle stops, release, adoption. */
export class SandboxManager {
  readonly runnerId: string;
  private readonly docker: Docker;
  private readonly agent: AgentProgram = agentProgram();
  private readonly store: SessionStore;
  private readonly journal: CallJournal;
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly lock = new KeyedMutex();
  private readonly quota: TenantQuota;
  private readonly firewall: SandboxFirewall;
  private readonly networks: SandboxNetworks;
  private readonly workspaces: WorkspaceDisks;
  private readonly provisionDeps: ProvisionDeps;
  readonly pool: WarmPool;
  private reaper: NodeJS.Timeout | undefined;
  /** Set by stop(): channels closing from here on are the runner's doing, not a sandbox failure. */
  private stopping = false;

  constructor(private readonly options: SandboxManagerOptions) {
    this.runnerId = options.runnerId;
    this.docker = options.docker;
    this.store = new SessionStore(options.stateDir);
    this.journal = new CallJournal((sessionId) => this.store.dir(sessionId));
    this.firewall = new SandboxFirewall(this.runnerId, options.dnsServers);
    this.networks = new SandboxNetworks(this.docker, this.runnerId, this.firewall);
    this.workspaces = new WorkspaceDisks(options.stateDir, options.log);
    this.provisionDeps = {
      docker: this.docker,
      agent: this.agent,
      workspaces: this.workspaces,
      networks: this.networks,
      nofile: options.nofile,
      log: options.log,
    };
    this.quota = new TenantQuota(options.maxSandboxesPerTenant, (tenantId) => {
      let held = 0;
      for (const sandbox of this.sandboxes.values()) if (sandbox.binding.tenant_id === tenantId) held += 1;
      return held;
    });
    this.pool = new WarmPool(this.provisionDeps, this.runnerId, {
      idleMs: options.poolIdleMs,
      maxPools: options.maxPools,
    });
  }

  /** Adopts this runner's running session containers, removes pool containers and orphans. */
  async start(): Promise<void> {
    if (this.options.limits.allowNetwork) await this.firewall.check();
    await this.workspaces.check();
    const adopted = await reconcile({
      docker: this.docker,
      runnerId: this.runnerId,
      store: this.store,
      networks: this.networks,
      workspaces: this.workspaces,
      log: this.options.log,
    });
    for (const { binding, container: state } of adopted) {
      const container =
        state === "missing"
          ? null
          : new SandboxContainer(this.docker, binding.container_id, this.options.log);
      const sandbox: Sandbox = { binding, container, status: "closed", lastUsedAt: Date.now(), inflight: 0 };
      this.sandboxes.set(binding.session_id, sandbox);
      if (container && state === "running") {
        try {
          this.watch(sandbox, await container.connect());
          sandbox.status = "ready";
        } catch (error) {
          this.options.log.warn(
            { err: error, sessionId: binding.session_id },
            "adopted sandbox did not answer",
          );
          sandbox.status = "error";
        }
      }
    }
    const interval = Math.max(250, Math.min(30_000, Math.floor(this.options.idleStopMs / 2)));
    this.reaper = setInterval(() => {
      void this.stopIdle();
      void this.pool.dropIdle();
    }, interval);
    this.reaper.unref();
  }

  /** Stops taking work: pooled containers are removed; session containers keep running for adoption. */
  async stop(): Promise<void> {
    clearInterval(this.reaper);
    this.stopping = true;
    await this.pool.drain();
    for (const sandbox of this.sandboxes.values()) {
      await this.saveShells(sandbox).catch(() => undefined);
      sandbox.container?.channel?.close();
    }
  }

  ensure(request: SandboxEnsureRequest): Promise<SandboxEnsureResponse> {
    return this.lock.run(request.session_id, async () => {
      const transitions: SandboxStatusValue[] = [];
      let sandbox = this.sandboxes.get(request.session_id);
      if (sandbox) this.assertOwner(sandbox, request.tenant_id);
      assertSandboxLimits(request.environment, this.options.limits);
      if (sandbox?.status === "ready" && sandbox.container?.connected) {
        this.updateSettings(sandbox, request);
        sandbox.lastUsedAt = Date.now();
        return this.ensured(sandbox, "existing", transitions);
      }
      this.notify(request.tenant_id, request.session_id, "provisioning", transitions);
      try {
        let provisioning: SandboxProvisioning;
        if (sandbox) {
          this.updateSettings(sandbox, request);
          provisioning = await this.revive(sandbox);
        } else {
          ({ sandbox, provisioning } = await this.create(request));
        }
        sandbox.status = "ready";
        sandbox.lastUsedAt = Date.now();
        this.notify(request.tenant_id, request.session_id, "ready", transitions);
        return this.ensured(sandbox, provisioning, transitions);
      } catch (error) {
        if (sandbox) sandbox.status = "error";
        const wrapped =
          error instanceof WakeloopError
            ? error
            : new WakeloopError(
                "sandbox_provision_failed",
                `could not provision the sandbox: ${(error as Error).message}`,
                {
                  cause: error,
                  retryable: true,
                },
              );
        this.notify(request.tenant_id, request.session_id, "error", transitions, wrapped);
        throw wrapped;
      }
    });
  }

  async execute(raw: unknown): Promise<SandboxExecuteResponse> {
    const request = SandboxExecuteRequest.parse(raw);
    const sandbox = this.held(request.session_id, request.tenant_id);
    sandbox.inflight += 1;
    try {
      const channel = await this.connected(sandbox);
      const environment = sandbox.binding.environment;
      let approval: { command: string; reason: string } | null = null;
      const result = await this.journal.once(request.session_id, request.tool_call_id, async () => {
        const check = checkExec(environment, request.tool, request.input);
        if (check !== null) {
          if (check.verdict === "deny")
            return this.completed(request.tool_call_id, failure("exec_denied", check.reason));
          if (check.verdict === "ask" && !(request.approved && (await this.committedAllow(request)))) {
            approval = { command: check.command ?? "", reason: check.reason };
            return null;
          }
        }
        const outcome = await runTool(
          { channel, environment, callId: request.tool_call_id, mounts: this.mounts(sandbox.binding) },
          request.tool,
          request.input,
        );
        return this.completed(request.tool_call_id, outcome);
      });
      if (result !== null) return result;
      const pending = approval as { command: string; reason: string } | null;
      return {
        outcome: "needs_approval",
        tool_call_id: request.tool_call_id,
        command: pending?.command ?? "",
        reason: pending?.reason ?? "the exec policy asks for approval",
      };
    } finally {
      sandbox.inflight -= 1;
      sandbox.lastUsedAt = Date.now();
    }
  }

  /** Interrupts a running call: its process group is killed and the call returns its result. */
  async cancel(tenantId: string, sessionId: string, toolCallId: string): Promise<boolean> {
    const sandbox = this.sandboxes.get(sessionId);
    if (!sandbox) return false;
    this.assertOwner(sandbox, tenantId);
    const channel = sandbox.container?.channel;
    if (!channel || channel.closed) return false;
    const { cancelled } = await channel.call("call.cancel", { callId: toolCallId });
    return cancelled;
  }

  /** Removes the session's sandbox; with `tenantId`, only when that tenant owns it. */
  release(sessionId: string, tenantId?: string): Promise<boolean> {
    return this.lock.run(sessionId, async () => {
      const sandbox = this.sandboxes.get(sessionId);
      const binding = sandbox?.binding ?? (await this.store.loadBinding(sessionId));
      if (binding && tenantId !== undefined) this.assertOwner({ binding }, tenantId);
      this.sandboxes.delete(sessionId);
      if (sandbox) sandbox.status = "closed";
      sandbox?.container?.channel?.close();
      await removeContainer(this.docker, sessionContainerName(this.runnerId, sessionId));
      if (binding) {
        await removeContainer(this.docker, binding.container_id);
        await this.workspaces.remove(binding.workspace_volume);
        if (binding.network !== null) await this.networks.remove(binding.network);
      }
      await this.store.remove(sessionId);
      if (binding) this.notify(binding.tenant_id, sessionId, "closed", []);
      return binding !== null;
    });
  }

  describe(sessionId: string): SandboxDescribeResponse {
    const sandbox = this.sandboxes.get(sessionId);
    return {
      session_id: sessionId,
      runner_id: this.runnerId,
      status: sandbox?.status ?? "absent",
      container_id: sandbox?.container?.id ?? null,
      environment: sandbox?.binding.environment ?? null,
    };
  }

  holds(sessionId: string): boolean {
    return this.sandboxes.has(sessionId);
  }

  /** Stops sandboxes idle past `idleStopMs`; their next call or ensure starts them again. */
  async stopIdle(now = Date.now()): Promise<void> {
    for (const sandbox of [...this.sandboxes.values()]) {
      if (sandbox.status !== "ready" || sandbox.inflight > 0) continue;
      if (now - sandbox.lastUsedAt < this.options.idleStopMs) continue;
      await this.lock
        .run(sandbox.binding.session_id, async () => {
          if (
            sandbox.status !== "ready" ||
            sandbox.inflight > 0 ||
            !this.sandboxes.has(sandbox.binding.session_id)
          )
            return;
          await this.saveShells(sandbox).catch(() => undefined);
          sandbox.status = "closed";
          await sandbox.container?.stop();
          this.notify(sandbox.binding.tenant_id, sandbox.binding.session_id, "closed", []);
        })
        .catch((error) =>
          this.options.log.warn({ err: error, sessionId: sandbox.binding.session_id }, "idle stop failed"),
        );
    }
  }

  // ---- internals ------------------------------------------------------------------------------

  /** The session's sandbox, refused unless `tenantId` owns it (the same answer as no sandbox at all). */
  private held(sessionId: string, tenantId: string): Sandbox {
    const sandbox = this.sandboxes.get(sessionId);
    if (!sandbox) {
      throw new WakeloopError(
        "sandbox_not_found",
        `runner ${this.runnerId} holds no sandbox for session ${sessionId}; call ensure first`,
      );
    }
    this.assertOwner(sandbox, tenantId);
    return sandbox;
  }

  private assertOwner(sandbox: Pick<Sandbox, "binding">, tenantId: string): void {
    if (sandbox.binding.tenant_id === tenantId) return;
    this.options.log.warn(
      { sessionId: sandbox.binding.session_id, tenantId },
      "refused a sandbox request from a tenant that does not own the session",
    );
    throw new WakeloopError(
      "sandbox_tenant_mismatch",
      `session ${sandbox.binding.session_id} has no sandbox for tenant ${tenantId}`,
    );
  }

  private async committedAllow(request: {
    tenant_id: string;
    session_id: string;
    tool_call_id: string;
  }): Promise<boolean> {
    const allowed = await this.options.approvals({
      tenantId: request.tenant_id,
      sessionId: request.session_id,
      toolCallId: request.tool_call_id,
    });
    if (!allowed) {
      this.options.log.warn(
        { sessionId: request.session_id, toolCallId: request.tool_call_id },
        "a call sent as approved has no committed allow; asking instead",
      );
    }
    return allowed;
  }

  private async create(
    request: SandboxEnsureRequest,
  ): Promise<{ sandbox: Sandbox; provisioning: SandboxProvisioning }> {
    const done = this.quota.reserve(request.tenant_id);
    try {
      return await this.provision(request);
    } finally {
      done();
    }
  }

  private async provision(
    request: SandboxEnsureRequest,
  ): Promise<{ sandbox: Sandbox; provisioning: SandboxProvisioning }> {
    const environment = request.environment;
    const substrateVolume = request.agent_id
      ? substrateVolumeName(request.tenant_id, request.agent_id)
      : null;
    if (request.agent_id && substrateVolume) {
      await ensureSubstrateVolume(this.docker, substrateVolume, request.tenant_id, request.agent_id);
    }
    const key = poolKey(environment, substrateVolume, this.agent.version);
    if (environment.warm_pool_size > 0) this.pool.register(key, environment, substrateVolume);
    const bindingBase = {
      tenant_id: request.tenant_id,
      session_id: request.session_id,
      agent_id: request.agent_id ?? null,
      environment,
      substrate_volume: substrateVolume,
    };
    const name = sessionContainerName(this.runnerId, request.session_id);
    const claimed = this.pool.claim(key);
    if (claimed) {
      const binding = {
        ...bindingBase,
        container_id: claimed.container.id,
        workspace_volume: claimed.workspace,
        network: claimed.network,
      };
      await this.store.saveBinding(binding);
      // The name is for people reading `docker ps`; the binding file is what adoption trusts, so the
      // rename (tens of ms in Docker) stays off the claim's path.
      void removeContainer(this.docker, name)
        .then(() => claimed.container.container.rename({ name }))
        .catch(() => undefined);
      const sandbox = this.track(binding, claimed.container);
      return { sandbox, provisioning: "warm" };
    }
    await removeContainer(this.docker, name); // left by a crash before its binding was written
    const provisioned = await provisionContainer(this.provisionDeps, {
      name,
      labels: {
        [LABEL.runner]: this.runnerId,
        [LABEL.session]: request.session_id,
        [LABEL.tenant]: request.tenant_id,
      },
      environment,
      substrateVolume,
    });
    const binding = {
      ...bindingBase,
      container_id: provisioned.container.id,
      workspace_volume: provisioned.workspace,
      network: provisioned.network,
    };
    await this.store.saveBinding(binding);
    const sandbox = this.track(binding, provisioned.container);
    this.watch(sandbox, await provisioned.container.connect());
    return { sandbox, provisioning: "cold" };
  }

  private track(binding: Binding, container: SandboxContainer): Sandbox {
    const sandbox: Sandbox = {
      binding,
      container,
      status: "provisioning",
      lastUsedAt: Date.now(),
      inflight: 0,
    };
    this.sandboxes.set(binding.session_id, sandbox);
    if (container.channel) this.watch(sandbox, container.channel);
    return sandbox;
  }

  /** Brings back a stopped sandbox, or re-creates its container over the kept workspace. */
  private async revive(sandbox: Sandbox): Promise<SandboxProvisioning> {
    const binding = sandbox.binding;
    const workspaceExists = await this.workspaces.exists(binding.workspace_volume);
    if (workspaceExists && sandbox.container && (await this.exists(binding.container_id))) {
      // Mounted before the start: the container binds whatever is at the mount point when it starts.
      await this.workspaces.mount(binding.workspace_volume);
      this.watch(sandbox, await sandbox.container.connect());
      await this.restoreShells(sandbox);
      return "restarted";
    }
    const name = sessionContainerName(this.runnerId, binding.session_id);
    await removeContainer(this.docker, name);
    if (sandbox.container) await removeContainer(this.docker, binding.container_id);
    if (binding.network !== null) await this.networks.remove(binding.network);
    const provisioned = await provisionContainer(this.provisionDeps, {
      name,
      labels: {
        [LABEL.runner]: this.runnerId,
        [LABEL.session]: binding.session_id,
        [LABEL.tenant]: binding.tenant_id,
      },
      environment: binding.environment,
      substrateVolume: binding.substrate_volume,
      ...(workspaceExists ? { workspace: binding.workspace_volume } : {}),
    });
    sandbox.binding = {
      ...binding,
      container_id: provisioned.container.id,
      workspace_volume: provisioned.workspace,
      network: provisioned.network,
    };
    sandbox.container = provisioned.container;
    await this.store.saveBinding(sandbox.binding);
    this.watch(sandbox, await provisioned.container.connect());
    await this.restoreShells(sandbox);
    return "cold";
  }

  /** The channel of a sandbox that must answer now: a stopped or broken one is revived first. */
  private async connected(sandbox: Sandbox) {
    const channel = sandbox.container?.channel;
    if (sandbox.status === "ready" && channel && !channel.closed) return channel;
    const { tenant_id, session_id } = sandbox.binding;
    await this.ensure({ tenant_id, session_id, environment: sandbox.binding.environment });
    const revived = sandbox.container?.channel;
    if (!revived || revived.closed) {
      throw new WakeloopError("sandbox_not_ready", `the sandbox of session ${session_id} is not answering`, {
        retryable: true,
      });
    }
    return revived;
  }

  /** A channel that dies under a ready sandbox (agent or container killed) turns it to `error`. */
  private watch(sandbox: Sandbox, channel: AgentChannel): void {
    channel.onClose((error) => {
      if (this.stopping || sandbox.container?.channel !== channel || sandbox.status !== "ready") return;
      sandbox.status = "error";
      this.notify(sandbox.binding.tenant_id, sandbox.binding.session_id, "error", [], error);
    });
  }

  private async exists(containerId: string): Promise<boolean> {
    try {
      await this.docker.getContainer(containerId).inspect();
      return true;
    } catch {
      return false;
    }
  }

  private async saveShells(sandbox: Sandbox): Promise<void> {
    const channel = sandbox.container?.channel;
    if (!channel || channel.closed) return;
    const { states } = await channel.call("shell.states", {}, { timeoutMs: 5_000 });
    await this.store.saveShellStates(sandbox.binding.session_id, states);
  }

  private async restoreShells(sandbox: Sandbox): Promise<void> {
    const states = await this.store.loadShellStates(sandbox.binding.session_id);
    if (Object.keys(states).length === 0) return;
    await sandbox.container?.channel?.call("shell.restore", { states }, { timeoutMs: 5_000 });
  }

  private updateSettings(sandbox: Sandbox, request: SandboxEnsureRequest): void {
    const environment = { ...sandbox.binding.environment };
    for (const setting of PER_CALL_SETTINGS)
      Object.assign(environment, { [setting]: request.environment[setting] });
    sandbox.binding = { ...sandbox.binding, environment };
    void this.store.saveBinding(sandbox.binding).catch(() => undefined);
  }

  private mounts(binding: Binding) {
    const mounts: Array<{ path: string; access: "rw" | "ro"; kind: "workspace" | "substrate" }> = [
      { path: WORKSPACE, access: binding.environment.workspace_access, kind: "workspace" },
    ];
    if (binding.substrate_volume) mounts.push({ path: SUBSTRATE_MOUNT, access: "ro", kind: "substrate" });
    return mounts;
  }

  private completed(toolCallId: string, outcome: ToolOutcome): SandboxExecuteCompleted {
    return {
      outcome: "completed",
      tool_call_id: toolCallId,
      is_error: outcome.isError,
      content: [{ type: "text", text: outcome.text }],
      result: outcome.details,
      replayed: false,
    };
  }

  private ensured(
    sandbox: Sandbox,
    provisioning: SandboxProvisioning,
    transitions: SandboxStatusValue[],
  ): SandboxEnsureResponse {
    return {
      session_id: sandbox.binding.session_id,
      runner_id: this.runnerId,
      status: sandbox.status,
      transitions,
      provisioning,
      container_id: sandbox.container?.id ?? sandbox.binding.container_id,
    };
  }

  private notify(
    tenantId: string,
    sessionId: string,
    status: SandboxStatusValue,
    transitions: SandboxStatusValue[],
    error?: WakeloopError,
  ): void {
    transitions.push(status);
    this.options.onStatus?.({
      tenant_id: tenantId,
      session_id: sessionId,
      runner_id: this.runnerId,
      status,
      at: new Date().toISOString(),
      ...(error ? { error: { code: error.code, message: error.message } } : {}),
    });
  }
}
