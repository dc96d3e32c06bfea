import {
  type SandboxDescribeResponse,
  type SandboxEnsureRequest,
  type SandboxEnsureResponse,
  type SandboxExecuteResponse,
  type SandboxMcpCloseRequest,
  type SandboxMcpOpenRequest,
  type SandboxMcpOpenResponse,
  type SandboxMcpSendRequest,
  type SandboxProvisioning,
  type SandboxStatusNotice,
  type SandboxStatusValue,
  WakeloopError,
} from "@wakeloop/contracts";
import { assertSandboxLimits, type SandboxLimits } from "@wakeloop/service-kit";
import type Docker from "dockerode";
import { agentProgram } from "./agent-program";
import { SandboxBrowsers } from "./browser/sandbox-browsers";
import { CallJournal } from "./call-journal";
import type { ApprovalCheck } from "./committed-allow";
import { KeyedMutex } from "./keyed-mutex";
import { type McpFramePublisher, McpStdioServers } from "./mcp-stdio-servers";
import type { RunnerLog } from "./runner-log";
import { SandboxExecutor } from "./sandbox-executor";
import { SandboxFirewall } from "./sandbox-firewall";
import { SandboxNetworks } from "./sandbox-network";
import { SandboxProvisioner } from "./sandbox-provisioner";
import { type HeldSandbox, SandboxRegistry } from "./sandbox-registry";
import { SandboxStatus } from "./sandbox-status";
import { SandboxTeardown } from "./sandbox-teardown";
import { SessionStore } from "./session-store";
import { ShellStatePersistence } from "./shell-state";
import type { SubstrateMirror } from "./substrate-mirror";
import { TenantQuota } from "./tenant-quota";
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
  /** Delivers MCP stdio servers' output to the attached worker; without one it is dropped. */
  onMcpFrame?: McpFramePublisher;
  /** The largest MCP frame the bus carries (NATS `max_payload` less headroom). */
  mcpMaxFrameBytes?: number;
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
  /**
   * Mirrors agent substrates from Postgres into /workspace/agent and backs the resources_* tools;
   * null for a runner without them (no substrate is mounted and those tools answer that).
   */
  substrates: SubstrateMirror | null;
};

/** Policy settings apply per call, so an `ensure` with a changed environment updates them in place. */
const PER_CALL_SETTINGS = ["exec_security", "exec_ask", "exec_allowlist", "command_timeout_ms"] as const;

/**
 * This runner's sandboxes, as the service, the fixtures and the bench see them. It wires the pieces
 * (registry, provisioner, executor, teardown, status, shell state, warm pool) and owns what spans
 * them: `ensure`, which takes a session's lock and walks it through its status transitions, and the
 * start-up and shutdown of the whole.
 */
export class SandboxManager {
  readonly runnerId: string;
  readonly pool: WarmPool;
  private readonly lock = new KeyedMutex();
  private readonly registry: SandboxRegistry;
  private readonly status: SandboxStatus;
  private readonly store: SessionStore;
  private readonly shells: ShellStatePersistence;
  private readonly firewall: SandboxFirewall;
  private readonly workspaces: WorkspaceDisks;
  private readonly provisioner: SandboxProvisioner;
  private readonly executor: SandboxExecutor;
  private readonly teardown: SandboxTeardown;
  private readonly browsers: SandboxBrowsers;
  private readonly mcp: McpStdioServers;
  private reaper: NodeJS.Timeout | undefined;

  constructor(private readonly options: SandboxManagerOptions) {
    const { docker, runnerId, log } = options;
    this.runnerId = runnerId;
    this.registry = new SandboxRegistry(runnerId, log);
    this.status = new SandboxStatus(runnerId, options.onStatus);
    this.store = new SessionStore(options.stateDir);
    this.shells = new ShellStatePersistence(this.store);
    this.firewall = new SandboxFirewall(runnerId, options.dnsServers);
    this.workspaces = new WorkspaceDisks(options.stateDir, log);
    this.browsers = new SandboxBrowsers(docker, log);
    this.mcp = new McpStdioServers(
      docker,
      log,
      options.onMcpFrame ?? (() => undefined),
      options.mcpMaxFrameBytes ?? 1024 * 1024 - 4096,
    );
    const networks = new SandboxNetworks(docker, runnerId, this.firewall);
    const provision = {
      docker,
      agent: agentProgram(),
      workspaces: this.workspaces,
      networks,
      substrates: options.substrates,
      nofile: options.nofile,
      log,
    };
    this.pool = new WarmPool(provision, runnerId, { idleMs: options.poolIdleMs, maxPools: options.maxPools });
    this.provisioner = new SandboxProvisioner({
      provision,
      runnerId,
      registry: this.registry,
      status: this.status,
      store: this.store,
      shells: this.shells,
      quota: new TenantQuota(options.maxSandboxesPerTenant, (tenantId) => this.registry.countOf(tenantId)),
      pool: this.pool,
    });
    this.executor = new SandboxExecutor({
      registry: this.registry,
      journal: new CallJournal((sessionId) => this.store.dir(sessionId)),
      approvals: options.approvals,
      substrates: options.substrates,
      log,
      ensure: (request) => this.ensure(request),
      browsers: this.browsers,
    });
    this.teardown = new SandboxTeardown({
      docker,
      runnerId,
      registry: this.registry,
      status: this.status,
      store: this.store,
      shells: this.shells,
      workspaces: this.workspaces,
      networks,
      lock: this.lock,
      idleStopMs: options.idleStopMs,
      browsers: this.browsers,
      mcp: this.mcp,
      log,
    });
  }

  /** Adopts this runner's running session containers, removes pool containers and orphans. */
  async start(): Promise<void> {
    if (this.options.limits.allowNetwork) await this.firewall.check();
    await this.workspaces.check();
    await this.provisioner.adopt();
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
    this.status.stop();
    await this.pool.drain();
    await this.browsers.stop();
    await this.mcp.stop();
    for (const sandbox of this.registry.all()) {
      await this.shells.save(sandbox.binding.session_id, sandbox.container).catch(() => undefined);
      sandbox.container?.channel?.close();
    }
  }

  ensure(request: SandboxEnsureRequest): Promise<SandboxEnsureResponse> {
    return this.lock.run(request.session_id, async () => {
      const transitions: SandboxStatusValue[] = [];
      let sandbox = this.registry.get(request.session_id);
      if (sandbox) this.registry.assertOwner(sandbox.binding, request.tenant_id);
      assertSandboxLimits(request.environment, this.options.limits);
      if (sandbox?.status === "ready" && sandbox.container?.connected) {
        this.updateSettings(sandbox, request);
        await this.syncSubstrate(sandbox);
        sandbox.lastUsedAt = Date.now();
        return this.ensured(sandbox, "existing", transitions);
      }
      this.status.notify(request.tenant_id, request.session_id, "provisioning", transitions);
      try {
        let provisioning: SandboxProvisioning;
        if (sandbox) {
          this.updateSettings(sandbox, request);
          await this.syncSubstrate(sandbox);
          provisioning = await this.provisioner.revive(sandbox);
        } else {
          ({ sandbox, provisioning } = await this.provisioner.create(request));
        }
        sandbox.status = "ready";
        sandbox.lastUsedAt = Date.now();
        this.status.notify(request.tenant_id, request.session_id, "ready", transitions);
        return this.ensured(sandbox, provisioning, transitions);
      } catch (error) {
        if (sandbox) sandbox.status = "error";
        const wrapped =
          error instanceof WakeloopError
            ? error
            : new WakeloopError(
                "sandbox_provision_failed",
                `could not provision the sandbox: ${(error as Error).message}`,
                { cause: error, retryable: true },
              );
        this.status.notify(request.tenant_id, request.session_id, "error", transitions, wrapped);
        throw wrapped;
      }
    });
  }

  execute(raw: unknown): Promise<SandboxExecuteResponse> {
    return this.executor.execute(raw);
  }

  /** Interrupts a running call: its process group is killed and the call returns its result. */
  cancel(tenantId: string, sessionId: string, toolCallId: string): Promise<boolean> {
    return this.executor.cancel(tenantId, sessionId, toolCallId);
  }

  /** Removes the session's sandbox; with `tenantId`, only when that tenant owns it. */
  release(sessionId: string, tenantId?: string): Promise<boolean> {
    return this.teardown.release(sessionId, tenantId);
  }

  /** Stops sandboxes idle past `idleStopMs`; their next call or ensure starts them again. */
  stopIdle(now = Date.now()): Promise<void> {
    return this.teardown.stopIdle(now);
  }

  /** Attaches a worker's MCP client to the session's stdio server, started in its container if needed. */
  mcpOpen(request: SandboxMcpOpenRequest): Promise<SandboxMcpOpenResponse> {
    const sandbox = this.registry.held(request.session_id, request.tenant_id);
    sandbox.lastUsedAt = Date.now();
    return this.mcp.open(sandbox, request);
  }

  mcpSend(request: SandboxMcpSendRequest): Promise<void> {
    this.registry.held(request.session_id, request.tenant_id);
    return this.mcp.send(request);
  }

  mcpClose(request: SandboxMcpCloseRequest): Promise<boolean> {
    this.registry.held(request.session_id, request.tenant_id);
    return this.mcp.close(request);
  }

  describe(sessionId: string): SandboxDescribeResponse {
    return this.registry.describe(sessionId);
  }

  holds(sessionId: string): boolean {
    return this.registry.holds(sessionId);
  }

  /** Sandboxes bound to sessions (running or idle-stopped), for metrics. */
  heldCount(): number {
    return this.registry.all().length;
  }

  /** Syncs an agent's mirror when this runner holds a sandbox of that agent (a substrate notice). */
  async refreshSubstrate(tenantId: string, agentId: string): Promise<void> {
    if (this.options.substrates === null) return;
    const held = this.registry
      .all()
      .some((sandbox) => sandbox.binding.tenant_id === tenantId && sandbox.binding.agent_id === agentId);
    if (held) await this.options.substrates.sync({ tenantId, agentId });
  }

  /**
   * Every ensure (each wake) brings the agent's mirror to its latest promoted versions, so a promotion
   * through another runner or a restore through the API reaches this session by its next wake.
   */
  private async syncSubstrate(sandbox: HeldSandbox): Promise<void> {
    const { tenant_id, agent_id, substrate_volume } = sandbox.binding;
    if (this.options.substrates === null || agent_id === null || substrate_volume === null) return;
    await this.options.substrates.sync({ tenantId: tenant_id, agentId: agent_id });
  }

  private updateSettings(sandbox: HeldSandbox, request: SandboxEnsureRequest): void {
    const environment = { ...sandbox.binding.environment };
    for (const setting of PER_CALL_SETTINGS)
      Object.assign(environment, { [setting]: request.environment[setting] });
    sandbox.binding = { ...sandbox.binding, environment };
    void this.store.saveBinding(sandbox.binding).catch(() => undefined);
  }

  private ensured(
    sandbox: HeldSandbox,
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
}
