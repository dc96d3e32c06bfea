import { AGENT_PROTOCOL, WakeloopError } from "@wakeloop/contracts";
import type Docker from "dockerode";
import { AgentChannel } from "./agent-channel";
import { type ContainerPlan, containerSpec } from "./container-spec";
import type { RunnerLog } from "./runner-log";

/** How long a started container's agent may take to answer its first request. */
const HELLO_TIMEOUT_MS = 15_000;

/** One container and its agent channel. */
export class SandboxContainer {
  channel: AgentChannel | null = null;

  constructor(
    private readonly docker: Docker,
    readonly id: string,
    private readonly log: RunnerLog,
  ) {}

  static async create(docker: Docker, plan: ContainerPlan, log: RunnerLog): Promise<SandboxContainer> {
    const container = await docker.createContainer(containerSpec(plan));
    return new SandboxContainer(docker, container.id, log);
  }

  get container(): Docker.Container {
    return this.docker.getContainer(this.id);
  }

  get connected(): boolean {
    return this.channel !== null && !this.channel.closed;
  }

  /** Starts the container when it is not running and opens the channel to its agent. */
  async connect(): Promise<AgentChannel> {
    if (this.channel && !this.channel.closed) return this.channel;
    const info = await this.container.inspect();
    if (!info.State.Running) {
      try {
        await this.container.start();
      } catch (error) {
        // 304: it started in between.
        if ((error as { statusCode?: number }).statusCode !== 304) throw error;
      }
    }
    const channel = await AgentChannel.attach(this.container, (text) =>
      this.log.warn({ containerId: this.id, agentStderr: text.slice(0, 2_000) }, "sandbox agent stderr"),
    );
    const hello = await channel.call("hello", {}, { timeoutMs: HELLO_TIMEOUT_MS }).catch((error) => {
      channel.close();
      throw error;
    });
    if (hello.protocol !== AGENT_PROTOCOL) {
      channel.close();
      throw new WakeloopError(
        "sandbox_agent_protocol",
        `sandbox agent speaks protocol ${hello.protocol}, the runner ${AGENT_PROTOCOL}`,
      );
    }
    this.channel = channel;
    return channel;
  }

  async stop(): Promise<void> {
    this.channel?.close();
    this.channel = null;
    try {
      await this.container.stop({ t: 1 });
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== 304 && status !== 404) throw error;
    }
  }

  async remove(): Promise<void> {
    this.channel?.close();
    this.channel = null;
    await removeContainer(this.docker, this.id);
  }
}

export async function removeContainer(docker: Docker, id: string): Promise<void> {
  try {
    await docker.getContainer(id).remove({ force: true, v: false });
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 409) throw error; // gone, or already being removed
  }
}

export async function removeVolume(docker: Docker, name: string): Promise<void> {
  try {
    await docker.getVolume(name).remove();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
}
