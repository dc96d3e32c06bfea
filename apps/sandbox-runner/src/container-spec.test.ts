import { EnvironmentConfig } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { containerSpec } from "./container-spec";
import { poolKey } from "./pool-key";

const agent = { source: "/* agent */", version: "v1" };

describe("containerSpec", () => {
  it("hardens every sandbox by default", () => {
    const spec = containerSpec({
      name: "wl-r-s-x",
      labels: { "wakeloop.runner": "r" },
      environment: EnvironmentConfig.parse({}),
      workspacePath: "/state/workspaces/wl-ws-1",
      substrateDir: "/state/substrates/wl-substrate-1",
      agent,
      network: null,
      nofile: 1_024,
    });
    expect(spec.User).toBe("0:0");
    expect(spec.Cmd).toEqual(["node", "-e", agent.source]);
    expect(spec.HostConfig).toMatchObject({
      CapDrop: ["ALL"],
      CapAdd: ["SETUID", "SETGID"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      NetworkMode: "none",
      PidsLimit: 256,
      Memory: 512 * 1024 * 1024,
      MemorySwap: 512 * 1024 * 1024,
      NanoCpus: 1e9,
      Privileged: false,
      Init: true,
      Ulimits: [
        { Name: "nofile", Soft: 1_024, Hard: 1_024 },
        { Name: "core", Soft: 0, Hard: 0 },
      ],
    });
    expect(spec.NetworkDisabled).toBe(true);
    expect(Object.keys(spec.HostConfig?.Tmpfs ?? {})).toEqual([
      "/tmp",
      "/home/sandbox",
      "/home/wl-mcp",
      "/home/wl-browser",
      "/run/wl-browser",
    ]);
    expect(spec.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: "/state/workspaces/wl-ws-1", Target: "/workspace", ReadOnly: false },
      {
        Type: "bind",
        Source: "/state/substrates/wl-substrate-1",
        Target: "/workspace/agent",
        ReadOnly: true,
      },
    ]);
    expect(JSON.stringify(spec)).not.toContain("docker.sock");
  });

  it("joins its own network, never Docker's default bridge, and follows the workspace access", () => {
    const spec = containerSpec({
      name: "n",
      labels: {},
      environment: EnvironmentConfig.parse({ network: "bridge", workspace_access: "ro", cpus: 0.5 }),
      workspacePath: "/state/workspaces/w",
      substrateDir: null,
      agent,
      network: "wl-net-0123456789ab",
      nofile: 256,
    });
    expect(spec.NetworkDisabled).toBe(false);
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: "wl-net-0123456789ab",
      NanoCpus: 5e8,
      Sysctls: { "net.ipv6.conf.all.disable_ipv6": "1" },
    });
    expect(spec.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: "/state/workspaces/w", Target: "/workspace", ReadOnly: true },
    ]);
  });
});

describe("poolKey", () => {
  it("ignores per-call settings and changes with anything fixed at creation", () => {
    const base = EnvironmentConfig.parse({});
    const key = poolKey(base, null, "v1");
    expect(poolKey({ ...base, exec_ask: "always", command_timeout_ms: 5_000 }, null, "v1")).toBe(key);
    expect(poolKey({ ...base, memory_mb: 1_024 }, null, "v1")).not.toBe(key);
    expect(poolKey({ ...base, workspace_mb: 2_048 }, null, "v1")).not.toBe(key);
    expect(poolKey(base, "wl-substrate-x", "v1")).not.toBe(key);
    expect(poolKey(base, null, "v2")).not.toBe(key);
  });
});
