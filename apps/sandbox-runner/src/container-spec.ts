import type { EnvironmentConfig } from "@wakeloop/contracts";
import type Docker from "dockerode";
import type { AgentProgram } from "./agent-program";

export const WORKSPACE = "/workspace";
export const SUBSTRATE_MOUNT = "/workspace/agent";
export const SANDBOX_HOME = "/home/sandbox";
/**
 * MCP stdio servers run as their own uid, with a HOME only they can read (container-exec.ts): the
 * vault's values in their environment stay out of the sandbox user's reach. Numeric ids need no
 * account in the image, so any image works; an image should leave 1001 and 1002 unused.
 */
export const MCP_SERVER_UID = 1001;
export const MCP_SERVER_HOME = "/home/wl-mcp";
/** Chromium runs as its own uid too, its profile in a HOME only it can read and write. */
export const BROWSER_UID = 1002;
export const BROWSER_HOME = "/home/wl-browser";
/** Root-owned: where the browser's launcher records its process and DevTools endpoint. */
export const BROWSER_RECORD_DIR = "/run/wl-browser";
/**
 * The container starts as root, but only the agent is root, and barely: it keeps CAP_SETUID and
 * CAP_SETGID (to start commands as 1000) and works as uid 1000 otherwise (agent/sandbox-user.ts).
 * Commands run as 1000 with no capabilities, and cannot signal the agent or reach its stdio.
 */
export const AGENT_USER = "0:0";
const AGENT_CAPABILITIES = ["SETUID", "SETGID"];

export type ContainerPlan = {
  name: string;
  labels: Record<string, string>;
  environment: EnvironmentConfig;
  /** The host directory where the session's workspace filesystem is mounted (WorkspaceDisks). */
  workspacePath: string;
  /** The host directory of the agent's substrate mirror (SubstrateMirror), mounted read-only. */
  substrateDir: string | null;
  agent: AgentProgram;
  /** The sandbox's own network (SandboxNetworks) when the environment may reach the network. */
  network: string | null;
  /** Open files per process: the agent and each command. */
  nofile: number;
};

/** tmpfs counts against the memory limit, so it gets a share of it rather than a fixed size. */
function tmpfsMb(memoryMb: number): number {
  return Math.max(16, Math.floor(memoryMb / 4));
}

/**
 * The hardened container every sandbox runs in: commands as uid 1000 without capabilities (the agent
 * keeps two, see AGENT_USER), no privilege gain, read-only root with tmpfs /tmp and HOME,
 * pids/memory(no swap)/CPU/open-file limits, no core dumps, no network unless it was given its own
 * fenced one (never Docker's default bridge, and no IPv6, which the fence does not cover), and never
 * the Docker socket. Its main process is the agent.
 */
export function containerSpec(plan: ContainerPlan): Docker.ContainerCreateOptions {
  const env = plan.environment;
  const memoryBytes = env.memory_mb * 1024 * 1024;
  const mounts: Docker.MountConfig = [
    {
      Type: "bind",
      Source: plan.workspacePath,
      Target: WORKSPACE,
      ReadOnly: env.workspace_access === "ro",
    },
  ];
  if (plan.substrateDir !== null) {
    mounts.push({ Type: "bind", Source: plan.substrateDir, Target: SUBSTRATE_MOUNT, ReadOnly: true });
  }
  const agentConfig = {
    workspace: WORKSPACE,
    readOnlyRoots: plan.substrateDir === null ? [] : [SUBSTRATE_MOUNT],
    workspaceAccess: env.workspace_access,
  };
  return {
    name: plan.name,
    Image: env.image,
    User: AGENT_USER,
    WorkingDir: WORKSPACE,
    Hostname: "sandbox",
    Cmd: ["node", "-e", plan.agent.source],
    Env: [`WL_AGENT_CONFIG=${JSON.stringify(agentConfig)}`, `HOME=${SANDBOX_HOME}`],
    Labels: plan.labels,
    Tty: false,
    OpenStdin: true,
    StdinOnce: false,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    NetworkDisabled: plan.network === null,
    HostConfig: {
      Mounts: mounts,
      Tmpfs: {
        "/tmp": `rw,nosuid,nodev,size=${tmpfsMb(env.memory_mb)}m`,
        [SANDBOX_HOME]: "rw,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0700",
        [MCP_SERVER_HOME]: `rw,nosuid,nodev,size=64m,uid=${MCP_SERVER_UID},gid=${MCP_SERVER_UID},mode=0700`,
        [BROWSER_HOME]: `rw,nosuid,nodev,size=${tmpfsMb(env.memory_mb)}m,uid=${BROWSER_UID},gid=${BROWSER_UID},mode=0700`,
        [BROWSER_RECORD_DIR]: "rw,nosuid,nodev,noexec,size=1m,uid=0,gid=0,mode=0755",
      },
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: AGENT_CAPABILITIES,
      SecurityOpt: ["no-new-privileges"],
      NetworkMode: plan.network ?? "none",
      ...(plan.network === null ? {} : { Sysctls: { "net.ipv6.conf.all.disable_ipv6": "1" } }),
      Ulimits: [
        { Name: "nofile", Soft: plan.nofile, Hard: plan.nofile },
        { Name: "core", Soft: 0, Hard: 0 },
      ],
      PidsLimit: env.pids_limit,
      Memory: memoryBytes,
      MemorySwap: memoryBytes,
      NanoCpus: Math.round(env.cpus * 1e9),
      // docker-init as PID 1 reaps the orphans commands leave behind (they count against PidsLimit).
      Init: true,
      // The protocol travels over stdout: a log driver would copy every reply to disk.
      LogConfig: { Type: "none", Config: {} },
      RestartPolicy: { Name: "no" },
      Privileged: false,
    },
  };
}
