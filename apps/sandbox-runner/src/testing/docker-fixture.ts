import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvironmentConfig, type SandboxStatusNotice } from "@wakeloop/contracts";
import { SandboxLimitsEnv, sandboxLimits } from "@wakeloop/service-kit";
import { labelledContainers, removeLabelled, requireDocker } from "@wakeloop/testing";
import type Docker from "dockerode";
import { agentProgram } from "../agent-program";
import { LABEL } from "../labels";
import type { ProvisionDeps } from "../provision";
import type { RunnerLog } from "../runner-log";
import { SandboxFirewall } from "../sandbox-firewall";
import { SandboxManager, type SandboxManagerOptions } from "../sandbox-manager";
import { SandboxNetworks } from "../sandbox-network";
import { type SandboxRunner, type SandboxServiceOptions, startSandboxService } from "../sandbox-service";
import { loopBackingFiles, mountPoints, WorkspaceDisks } from "../workspace-disks";
import { testApprovals } from "./session-driver";

export const silent: RunnerLog = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
} as unknown as RunnerLog;

export function testEnvironment(overrides: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  return EnvironmentConfig.parse({ memory_mb: 256, pids_limit: 128, ...overrides });
}

/** The runner settings of a test: the operator defaults, with network allowed so it can be tested. */
export function testRunnerSettings() {
  return {
    limits: { ...sandboxLimits(SandboxLimitsEnv.parse({})), allowNetwork: true },
    maxSandboxesPerTenant: 16,
    nofile: 1_024,
    poolIdleMs: 900_000,
    maxPools: 8,
    dnsServers: [],
    approvals: testApprovals,
    // Tests of substrates pass a SubstrateMirror over their own test database.
    substrates: null,
  } satisfies Partial<SandboxManagerOptions>;
}

/** A runner with its own id and state directory; `cleanup` removes exactly what that id created. */
export class RunnerFixture {
  readonly statuses: SandboxStatusNotice[] = [];
  readonly managers: SandboxManager[] = [];
  readonly runners: SandboxRunner[] = [];

  private constructor(
    readonly docker: Docker,
    readonly runnerId: string,
    readonly stateDir: string,
  ) {}

  static async create(): Promise<RunnerFixture> {
    const docker = await requireDocker();
    const stateDir = await mkdtemp(join(tmpdir(), "wl-sandbox-test-"));
    return new RunnerFixture(docker, `t${randomBytes(5).toString("hex")}`, stateDir);
  }

  async manager(options: Partial<SandboxManagerOptions> = {}): Promise<SandboxManager> {
    const manager = new SandboxManager({
      docker: this.docker,
      runnerId: this.runnerId,
      stateDir: this.stateDir,
      idleStopMs: 600_000,
      log: silent,
      onStatus: (notice) => this.statuses.push(notice),
      ...testRunnerSettings(),
      ...options,
    });
    await manager.start();
    this.managers.push(manager);
    return manager;
  }

  /** This runner on the bus (`startSandboxService`), stopped by `cleanup`. */
  async service(
    bus: SandboxServiceOptions["bus"],
    options: Partial<SandboxServiceOptions> = {},
  ): Promise<SandboxRunner> {
    const runner = await startSandboxService({
      bus,
      docker: this.docker,
      runnerId: this.runnerId,
      stateDir: this.stateDir,
      idleStopMs: 600_000,
      log: silent,
      ...testRunnerSettings(),
      ...options,
    });
    this.runners.push(runner);
    return runner;
  }

  /** What provisioning outside a manager needs (benchmarks, orphans made by hand). */
  provisionDeps(): ProvisionDeps {
    const firewall = new SandboxFirewall(this.runnerId, []);
    return {
      docker: this.docker,
      agent: agentProgram(),
      workspaces: new WorkspaceDisks(this.stateDir, silent),
      networks: new SandboxNetworks(this.docker, this.runnerId, firewall),
      substrates: null,
      nofile: 1_024,
      log: silent,
    };
  }

  containers(): Promise<Docker.ContainerInfo[]> {
    return labelledContainers(this.docker, { [LABEL.runner]: this.runnerId });
  }

  /** The workspaces this runner left on the host: images, mount points and mounts. */
  workspaces(): Promise<string[]> {
    return new WorkspaceDisks(this.stateDir, silent).list();
  }

  /** Mounts and loop devices of this runner's workspaces (none may outlive its workspace). */
  async workspaceMounts(): Promise<{ mounts: string[]; loops: string[] }> {
    const dir = new WorkspaceDisks(this.stateDir, silent).dir;
    const inDir = (path: string) => path.startsWith(`${dir}/`);
    return {
      mounts: [...(await mountPoints())].filter(inDir),
      loops: (await loopBackingFiles()).filter(inDir),
    };
  }

  async cleanup(): Promise<void> {
    for (const runner of this.runners) await runner.stop().catch(() => undefined);
    for (const manager of this.managers) await manager.stop().catch(() => undefined);
    await removeLabelled(this.docker, { [LABEL.runner]: this.runnerId });
    // Networks, then the firewall rules, that carry this runner id: the containers are gone by now.
    await this.provisionDeps().networks.reconcile(new Set());
    // Unmounted before the directory goes: rm would otherwise descend into mounted workspaces.
    await this.provisionDeps().workspaces.reconcile(new Set());
    await rm(this.stateDir, { recursive: true, force: true });
  }
}
