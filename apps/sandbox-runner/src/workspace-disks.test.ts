import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunnerFixture, silent, testEnvironment } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";
import { WorkspaceDisks } from "./workspace-disks";

// The workspace as its own filesystem of workspace_mb (real Docker, real loop devices): bounded per
// session, kept across idle stops and restarts, re-mounted after a "reboot", gone with the sandbox.

const run = promisify(execFile);
let fixture: RunnerFixture;

beforeEach(async () => {
  fixture = await RunnerFixture.create();
});
afterEach(async () => {
  await fixture.cleanup();
});

/** The size of /workspace as the sandbox sees it, in MB (df: less the journal and metadata). */
async function workspaceSizeMb(s: SessionDriver): Promise<number> {
  const { text } = await s.run("shell_run", { command: "df -m --output=size /workspace | tail -1" });
  return Number(text.trim().split("\n")[0]);
}

describe("workspace disks", () => {
  it("gives each session a filesystem of its workspace_mb, cold or from the warm pool", async () => {
    const manager = await fixture.manager();
    const environment = testEnvironment({ workspace_mb: 48, warm_pool_size: 1 });
    const cold = new SessionDriver(manager, undefined, environment);
    expect((await cold.ensure()).provisioning).toBe("cold");
    await manager.pool.waitFull();
    const warm = new SessionDriver(manager, undefined, environment);
    expect((await warm.ensure()).provisioning).toBe("warm");
    const small = new SessionDriver(manager, undefined, testEnvironment({ workspace_mb: 16 }));
    await small.ensure();

    for (const s of [cold, warm]) {
      const size = await workspaceSizeMb(s);
      expect(size).toBeGreaterThan(32); // ext4 keeps a journal and metadata out of it
      expect(size).toBeLessThanOrEqual(48);
    }
    expect(await workspaceSizeMb(small)).toBeLessThanOrEqual(16);
    // Filling one leaves the others their room.
    const filled = await small.run("shell_run", { command: "head -c 40M /dev/zero > /workspace/fill" });
    expect(filled.text).toContain("No space left on device");
    expect(filled.text).toContain("the workspace is full (16 MB");
    const fits = await warm.run("shell_run", {
      command: "head -c 30M /dev/zero > /workspace/fill && echo OK",
    });
    expect(fits.text).toContain("OK");
    // The workspace starts empty and belongs to the sandbox user.
    expect(
      (await cold.run("shell_run", { command: "ls -A /workspace; stat -c %u /workspace" })).text,
    ).toMatch(/^1000\n/);
  });

  it("keeps the files across an idle stop and a restart, and re-mounts them after a reboot", async () => {
    const manager = await fixture.manager({ idleStopMs: 200 });
    const s = new SessionDriver(manager, undefined, testEnvironment({ workspace_mb: 16 }));
    await s.ensure();
    await s.run("write", { path: "kept.txt", content: "kept\n" });
    await manager.stopIdle(Date.now() + 1_000);
    expect(manager.describe(s.sessionId).status).toBe("closed");
    expect((await s.run("read", { path: "kept.txt" })).text).toContain("kept");

    // A reboot: the runner and the container are gone, so is the mount; only the image is left.
    await manager.stop();
    const [workspace] = await fixture.workspaces();
    const disks = new WorkspaceDisks(fixture.stateDir, silent);
    await fixture.docker.getContainer(manager.describe(s.sessionId).container_id ?? "").stop({ t: 1 });
    await run("umount", [disks.mountPath(workspace ?? "")]);
    expect((await fixture.workspaceMounts()).mounts).toEqual([]);

    const successor = await fixture.manager();
    expect((await fixture.workspaceMounts()).mounts).toEqual([disks.mountPath(workspace ?? "")]);
    const after = new SessionDriver(successor, s.sessionId);
    expect((await after.run("shell_run", { command: "cat /workspace/kept.txt" })).text).toContain("kept");
  });

  it("reconcile unmounts and deletes workspaces no binding names", async () => {
    const disks = new WorkspaceDisks(fixture.stateDir, silent);
    const orphan = WorkspaceDisks.newName();
    await disks.create(orphan, 16);
    const unmounted = WorkspaceDisks.newName();
    await disks.create(unmounted, 16);
    await run("umount", [disks.mountPath(unmounted)]);
    expect(await fixture.workspaces()).toEqual([orphan, unmounted].sort());

    await fixture.manager();
    expect(await fixture.workspaces()).toEqual([]);
    expect(await fixture.workspaceMounts()).toEqual({ mounts: [], loops: [] });
  });
});
