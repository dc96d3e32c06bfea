import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { LABEL, sessionKey } from "./labels";
import { provisionContainer } from "./provision";
import { RunnerFixture, testEnvironment } from "./testing/docker-fixture";
import { SessionDriver, textOf } from "./testing/session-driver";

// Container lifecycle: warm pool, idle stop and restart, release, exec policy, idempotency, and a
// runner killed with SIGKILL whose successor adopts or removes everything it left.

let fixture: RunnerFixture;
const children: ChildProcess[] = [];

beforeEach(async () => {
  fixture = await RunnerFixture.create();
});
afterEach(async () => {
  await fixture.cleanup();
});
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

describe("provisioning", () => {
  it("claims warm containers from the pool and refills it", async () => {
    const manager = await fixture.manager();
    const environment = testEnvironment({ warm_pool_size: 2 });
    const first = new SessionDriver(manager, undefined, environment);
    expect((await first.ensure()).provisioning).toBe("cold");
    await manager.pool.waitFull();
    expect(Object.values(manager.pool.sizes())).toEqual([2]);

    const second = new SessionDriver(manager, undefined, environment);
    const claimed = await second.ensure();
    expect(claimed).toMatchObject({
      provisioning: "warm",
      status: "ready",
      transitions: ["provisioning", "ready"],
    });
    expect((await second.run("shell_run", { command: "echo warm && id -u" })).text).toContain("warm\n1000");
    let inspected = await fixture.docker.getContainer(claimed.container_id).inspect();
    for (let i = 0; i < 100 && !inspected.Name.includes("-s-"); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20)); // renamed off the claim's path
      inspected = await fixture.docker.getContainer(claimed.container_id).inspect();
    }
    expect(inspected.Name).toBe(`/wl-${fixture.runnerId}-s-${sessionKey(second.sessionId)}`);
    expect(inspected.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: ["SETUID", "SETGID"],
      NetworkMode: "none",
      PidsLimit: 128,
    });
    expect(inspected.HostConfig.SecurityOpt).toEqual(["no-new-privileges"]);
    // Root only for the agent, which keeps two capabilities; what the tools run is uid 1000 with none.
    expect(inspected.Config.User).toBe("0:0");
    expect((await second.run("shell_run", { command: "id -u; grep CapEff /proc/self/status" })).text).toMatch(
      /^1000\nCapEff:\s+0+\n/,
    );

    await manager.pool.waitFull();
    expect(Object.values(manager.pool.sizes())).toEqual([2]);
    expect((await first.ensure()).provisioning).toBe("existing");
  });

  it("stops an idle sandbox and restarts it with its files, cwd and env", async () => {
    const manager = await fixture.manager({ idleStopMs: 200 });
    const s = new SessionDriver(manager);
    const { container_id } = await s.ensure();
    await s.run("shell_exec", {
      command: "mkdir -p /workspace/keep && cd /workspace/keep && export MOOD=calm && echo kept > f.txt",
    });
    await manager.stopIdle(Date.now() + 1_000);
    expect(manager.describe(s.sessionId).status).toBe("closed");
    expect((await fixture.docker.getContainer(container_id).inspect()).State.Running).toBe(false);

    const after = await s.run("shell_exec", { command: 'pwd; echo "$MOOD"; cat f.txt' });
    expect(after.text).toContain("/workspace/keep\ncalm\nkept");
    const statuses = fixture.statuses.filter((n) => n.session_id === s.sessionId).map((n) => n.status);
    expect(statuses).toEqual(["provisioning", "ready", "closed", "provisioning", "ready"]);
  });

  it("release removes the container, the workspace (mount, loop device, image) and the records", async () => {
    const manager = await fixture.manager();
    const s = new SessionDriver(manager);
    const { container_id } = await s.ensure();
    expect(await fixture.workspaces()).toHaveLength(1);
    expect((await fixture.workspaceMounts()).loops).toHaveLength(1);
    expect(await manager.release(s.sessionId)).toBe(true);
    expect(await fixture.containers()).toHaveLength(0);
    expect(await fixture.workspaces()).toEqual([]);
    expect(await fixture.workspaceMounts()).toEqual({ mounts: [], loops: [] });
    await expect(fixture.docker.getContainer(container_id).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });
    expect(manager.describe(s.sessionId).status).toBe("absent");
    await expect(s.call("ls", {})).rejects.toMatchObject({ code: "sandbox_not_found" });
    expect(fixture.statuses.at(-1)).toMatchObject({ session_id: s.sessionId, status: "closed" });
  });
});

describe("exec policy and idempotency", () => {
  it("asks, denies or allows commands by the environment's exec policy", async () => {
    const manager = await fixture.manager();
    const s = new SessionDriver(
      manager,
      undefined,
      testEnvironment({ exec_security: "allowlist", exec_ask: "on-miss", exec_allowlist: ["echo", "cat"] }),
    );
    await s.ensure();
    expect((await s.run("shell_run", { command: "echo listed" }, { approved: false })).text).toContain(
      "listed",
    );

    const callId = s.nextCallId();
    const asked = await s.call(
      "shell_run",
      { command: "touch /workspace/made" },
      { approved: false, callId },
    );
    expect(asked).toMatchObject({ outcome: "needs_approval", command: "touch /workspace/made" });
    expect((await s.run("bash", { command: "cat /workspace/nothing" }, { approved: false })).text).toContain(
      "No such file",
    );
    expect((await s.call("bash", { command: "ls /workspace" }, { approved: false })).outcome).toBe(
      "needs_approval",
    );
    // Approval arrives: the same call id now runs.
    expect((await s.run("shell_run", { command: "touch /workspace/made" }, { callId })).is_error).toBe(false);

    const denying = new SessionDriver(manager, undefined, testEnvironment({ exec_security: "deny" }));
    await denying.ensure();
    const denied = await denying.run("shell_run", { command: "echo hi" });
    expect(denied).toMatchObject({ is_error: true, result: { code: "exec_denied" } });
  });

  it("returns the recorded result for a repeated call id, also after a runner restart", async () => {
    const manager = await fixture.manager();
    const s = new SessionDriver(manager);
    await s.ensure();
    const callId = s.nextCallId();
    const input = { command: "echo tick >> /workspace/ticks; wc -l < /workspace/ticks" };
    const first = await s.run("shell_run", input, { callId });
    const again = await s.run("shell_run", input, { callId });
    expect(again.replayed).toBe(true);
    expect(again.text).toBe(first.text);

    await manager.stop();
    const restarted = await fixture.manager();
    const replay = await new SessionDriver(restarted, s.sessionId).run("shell_run", input, { callId });
    expect(replay.replayed).toBe(true);
    const count = await new SessionDriver(restarted, s.sessionId).run("bash", {
      command: "wc -l /workspace/ticks",
    });
    expect(count.text).toContain("1 /workspace/ticks");
  });
});

describe("runner restart", () => {
  it("a runner killed with SIGKILL leaves nothing its successor does not adopt or remove", async () => {
    const script = fileURLToPath(new URL("./testing/runner-process.ts", import.meta.url));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", script, fixture.runnerId, fixture.stateDir, "sesn_a", "sesn_b"],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    children.push(child);
    const ready = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split("\n").find((l) => l.startsWith("READY "));
        if (line) resolve(line.slice("READY ".length));
      });
      child.once("exit", (code) => reject(new Error(`runner process exited early (${code})`)));
    });
    expect(JSON.parse(ready)).toEqual(["cold", "warm"]);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    // Two session containers and one pooled one survive the kill; add an orphan of a crash mid-provisioning.
    await provisionContainer(fixture.provisionDeps(), {
      name: `wl-${fixture.runnerId}-orphan`,
      labels: { [LABEL.runner]: fixture.runnerId, [LABEL.session]: "sesn_never_bound" },
      environment: testEnvironment(),
      substrate: null,
    });
    expect(await fixture.containers()).toHaveLength(4);
    expect(await fixture.workspaces()).toHaveLength(4);

    const successor = await fixture.manager();
    const left = await fixture.containers();
    expect(left).toHaveLength(2);
    expect(left.every((c) => c.State === "running")).toBe(true);
    expect(await fixture.workspaces()).toHaveLength(2);
    expect((await fixture.workspaceMounts()).loops).toHaveLength(2);
    for (const sessionId of ["sesn_a", "sesn_b"]) {
      expect(successor.describe(sessionId).status).toBe("ready");
      const s = new SessionDriver(successor, sessionId);
      // The agent kept running through the runner's death: the persistent shell still has its state.
      const response = await s.call("shell_exec", { command: 'pwd; echo "$OWNER"; cat id.txt' });
      if (response.outcome !== "completed") throw new Error("unexpected approval");
      expect(textOf(response)).toContain(`/workspace/w\n${sessionId}\n${sessionId}`);
    }
  });
});
