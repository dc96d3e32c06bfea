import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type Docker from "dockerode";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LABEL } from "./labels";
import { SandboxFirewall } from "./sandbox-firewall";
import { bridgeOf } from "./sandbox-network";
import { RunnerFixture, testEnvironment } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// Sandbox networks and their firewall rules live as long as their container: removed on release,
// with a dropped warm pool, and by a restarted runner when nothing it holds uses them.

const run = promisify(execFile);
let fixture: RunnerFixture;

beforeEach(async () => {
  fixture = await RunnerFixture.create();
});
afterEach(async () => {
  await fixture.cleanup();
});

function networks(): Promise<Docker.NetworkInspectInfo[]> {
  const filters = JSON.stringify({ label: [`${LABEL.runner}=${fixture.runnerId}`] });
  return fixture.docker.listNetworks({ filters });
}

/** The bridges this runner has firewall rules for, by their tag. */
async function fencedBridges(): Promise<string[]> {
  const { stdout } = await run("iptables", ["-w", "-S"]);
  const tag = `wakeloop:${fixture.runnerId}:`;
  const bridges = stdout
    .split("\n")
    .flatMap((line) => (line.includes(tag) ? [line.split(tag)[1]?.split('"')[0] ?? ""] : []));
  return [...new Set(bridges)].sort();
}

describe("sandbox networks", () => {
  it("a restarted runner fences the networks it holds again and removes the rest with their rules", async () => {
    const first = await fixture.manager();
    const kept = new SessionDriver(first, undefined, testEnvironment({ network: "bridge" }));
    await kept.ensure();
    const [held] = (await networks()).map((network) => network.Name);
    expect(held).toBeDefined();
    // An orphan of a crash between creating a network and its container.
    const orphan = await fixture.provisionDeps().networks.create({ [LABEL.session]: "sesn_never_bound" });
    expect(await fencedBridges()).toEqual([bridgeOf(held ?? ""), bridgeOf(orphan)].sort());
    await first.stop();
    // As after a host reboot: the kernel lost the held network's rules, Docker kept the network.
    await new SandboxFirewall(fixture.runnerId, []).remove(bridgeOf(held ?? ""));
    expect(await fencedBridges()).toEqual([bridgeOf(orphan)]);

    const successor = await fixture.manager();
    expect((await networks()).map((network) => network.Name)).toEqual([held]);
    expect(await fencedBridges()).toEqual([bridgeOf(held ?? "")]);
    const again = new SessionDriver(successor, kept.sessionId, kept.environment);
    expect((await again.run("shell_run", { command: "echo still here" })).text).toContain("still here");

    await successor.release(kept.sessionId);
    expect(await networks()).toEqual([]);
    expect(await fencedBridges()).toEqual([]);
  }, 120_000);

  it("warm pools are bounded in number and dropped when unused, with their containers and networks", async () => {
    const manager = await fixture.manager({ poolIdleMs: 60_000, maxPools: 1 });
    const environment = testEnvironment({ network: "bridge", warm_pool_size: 1 });
    await new SessionDriver(manager, undefined, environment).ensure();
    await manager.pool.waitFull();
    expect(Object.values(manager.pool.sizes())).toEqual([1]);
    expect(await networks()).toHaveLength(2);
    // No room for a second pool: another environment starts cold and keeps nothing warm.
    const other = testEnvironment({ network: "bridge", warm_pool_size: 1, memory_mb: 320 });
    expect((await new SessionDriver(manager, undefined, other).ensure()).provisioning).toBe("cold");
    expect(Object.values(manager.pool.sizes())).toEqual([1]);
    expect(await networks()).toHaveLength(3);

    await manager.pool.dropIdle(Date.now() + 30_000);
    expect(Object.values(manager.pool.sizes())).toEqual([1]);
    await manager.pool.dropIdle(Date.now() + 60_000);
    expect(manager.pool.sizes()).toEqual({});
    const pooled = await fixture.containers();
    expect(pooled.filter((container) => container.Labels[LABEL.pool] !== undefined)).toEqual([]);
    expect(await networks()).toHaveLength(2);
    expect(await fencedBridges()).toHaveLength(2);
  }, 120_000);
});
