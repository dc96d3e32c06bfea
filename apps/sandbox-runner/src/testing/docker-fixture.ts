import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvironmentConfig, type SandboxStatusNotice } from "@wakeloop/contracts";
import Docker from "dockerode";
import { LABEL } from "../labels";
import type { RunnerLog } from "../runner-log";
import { SandboxManager, type SandboxManagerOptions } from "../sandbox-manager";

export const SANDBOX_IMAGE = "wakeloop-sandbox:bookworm";

const silent: RunnerLog = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
} as unknown as RunnerLog;

/** Fails with the fix when Docker or the sandbox image is missing (tests never skip). */
export async function requireDocker(docker = new Docker()): Promise<Docker> {
  try {
    await docker.ping();
  } catch {
    throw new Error("Docker is not reachable. Start it with: bash infra/docker-engine.sh");
  }
  try {
    await docker.getImage(SANDBOX_IMAGE).inspect();
  } catch {
    throw new Error(`The image ${SANDBOX_IMAGE} is missing. Build it with: bash infra/sandbox-image.sh`);
  }
  return docker;
}

export function testEnvironment(overrides: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  return EnvironmentConfig.parse({ memory_mb: 256, pids_limit: 128, ...overrides });
}

/** A runner with its own id and state directory; `cleanup` removes exactly what that id created. */
export class RunnerFixture {
  readonly statuses: SandboxStatusNotice[] = [];
  readonly managers: SandboxManager[] = [];

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
      ...options,
    });
    await manager.start();
    this.managers.push(manager);
    return manager;
  }

  async containers(): Promise<Docker.ContainerInfo[]> {
    return this.docker.listContainers({
      all: true,
      filters: JSON.stringify({ label: [`${LABEL.runner}=${this.runnerId}`] }),
    });
  }

  async volumes(): Promise<string[]> {
    const { Volumes } = await this.docker.listVolumes({
      filters: JSON.stringify({ label: [`${LABEL.runner}=${this.runnerId}`] }),
    });
    return (Volumes ?? []).map((volume) => volume.Name);
  }

  async cleanup(): Promise<void> {
    for (const manager of this.managers) await manager.stop().catch(() => undefined);
    for (const info of await this.containers()) {
      await this.docker
        .getContainer(info.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
    for (const name of await this.volumes())
      await this.docker
        .getVolume(name)
        .remove()
        .catch(() => undefined);
    await rm(this.stateDir, { recursive: true, force: true });
  }
}
