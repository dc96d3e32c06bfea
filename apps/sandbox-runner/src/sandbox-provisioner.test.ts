import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunnerFixture } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// Revival against real Docker: what the provisioner does with a held sandbox whose container died or
// was removed behind the runner's back (the idle-stop restart is in sandbox-lifecycle.test.ts).

let fixture: RunnerFixture;

beforeEach(async () => {
  fixture = await RunnerFixture.create();
});
afterEach(async () => {
  await fixture.cleanup();
});

function statusesOf(sessionId: string) {
  return fixture.statuses.filter((notice) => notice.session_id === sessionId).map((notice) => notice.status);
}

describe("revival", () => {
  it("restarts a container that died under a ready sandbox, with its files", async () => {
    const manager = await fixture.manager();
    const s = new SessionDriver(manager);
    const { container_id } = await s.ensure();
    await s.run("write", { path: "kept.txt", content: "still here\n" });
    await fixture.docker.getContainer(container_id).kill();
    await expect.poll(() => manager.describe(s.sessionId).status).toBe("error");

    expect(await s.ensure()).toMatchObject({ provisioning: "restarted", status: "ready", container_id });
    expect((await s.run("read", { path: "kept.txt" })).text).toContain("still here");
    expect(statusesOf(s.sessionId)).toEqual(["provisioning", "ready", "error", "provisioning", "ready"]);
  });

  it("re-creates a removed container over the kept workspace, as a call finds it", async () => {
    const manager = await fixture.manager({ idleStopMs: 200 });
    const s = new SessionDriver(manager);
    const { container_id } = await s.ensure();
    await s.run("shell_exec", { command: "mkdir -p /workspace/d && cd /workspace/d && echo kept > f.txt" });
    await manager.stopIdle(Date.now() + 1_000);
    await fixture.docker.getContainer(container_id).remove({ force: true });

    // The call revives the sandbox itself: a new container, the same files, the saved cwd.
    const after = await s.run("shell_exec", { command: "pwd; cat f.txt" });
    expect(after.text).toContain("/workspace/d\nkept");
    const revived = manager.describe(s.sessionId);
    expect(revived).toMatchObject({ status: "ready" });
    expect(revived.container_id).not.toBe(container_id);
    expect(statusesOf(s.sessionId)).toEqual(["provisioning", "ready", "closed", "provisioning", "ready"]);
  });
});
