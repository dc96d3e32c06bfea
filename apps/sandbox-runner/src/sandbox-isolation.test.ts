import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerFixture, testEnvironment } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// What the sandbox refuses and contains: path escapes, resource abuse, network, other sessions.

let fixture: RunnerFixture;
let s: SessionDriver;

beforeAll(async () => {
  fixture = await RunnerFixture.create();
  s = new SessionDriver(
    await fixture.manager(),
    undefined,
    testEnvironment({ memory_mb: 128, pids_limit: 64 }),
  );
  await s.ensure();
});

afterAll(async () => {
  await fixture?.cleanup();
});

describe("path safety", () => {
  it("refuses .. and absolute paths outside /workspace", async () => {
    expect((await s.run("read", { path: "../etc/passwd" })).result).toMatchObject({
      code: "path_outside_workspace",
    });
    expect((await s.run("read", { path: "/etc/passwd" })).result).toMatchObject({
      code: "path_outside_workspace",
    });
    expect((await s.run("write", { path: "a/../../tmp/x", content: "x" })).result).toMatchObject({
      code: "path_outside_workspace",
    });
    expect((await s.run("ls", { path: "/" })).result).toMatchObject({ code: "path_outside_workspace" });
    // `..` that stays inside is fine.
    await s.run("write", { path: "in/side.txt", content: "ok\n" });
    expect((await s.run("read", { path: "in/../in/side.txt" })).is_error).toBe(false);
  });

  it("refuses symlink escapes, in the final component and in a parent", async () => {
    await s.run("shell_run", {
      command: "ln -sf /etc/passwd /workspace/link && ln -sfn /etc /workspace/etcdir",
    });
    const viaFile = await s.run("read", { path: "link" });
    expect(viaFile.result).toMatchObject({ code: "path_symlink_escape" });
    expect((await s.run("read", { path: "etcdir/hostname" })).result).toMatchObject({
      code: "path_symlink_escape",
    });
    expect((await s.run("write", { path: "etcdir/new", content: "x" })).result).toMatchObject({
      code: "path_symlink_escape",
    });
    expect((await s.run("grep", { pattern: "root", path: "etcdir" })).result).toMatchObject({
      code: "path_symlink_escape",
    });
    // A symlink that stays inside is followed.
    await s.run("shell_run", { command: "ln -sf in/side.txt /workspace/inner-link" });
    expect((await s.run("read", { path: "inner-link" })).text).toContain("ok");
  });

  it("refuses hard-linked files and devices (fifo)", async () => {
    await s.run("shell_run", {
      command: "echo data > /workspace/orig && ln /workspace/orig /workspace/hard && mkfifo /workspace/pipe",
    });
    expect((await s.run("read", { path: "hard" })).result).toMatchObject({ code: "path_hardlink_escape" });
    expect((await s.run("write", { path: "hard", content: "x" })).result).toMatchObject({
      code: "path_hardlink_escape",
    });
    expect((await s.run("read", { path: "pipe" })).result).toMatchObject({ code: "path_is_device" });
  });

  it("keeps the root filesystem read-only and the user unprivileged", async () => {
    const result = await s.run("shell_run", {
      command: "id -u; touch /usr/x 2>&1; cat /proc/self/status | grep CapEff",
    });
    expect(result.text).toContain("1000");
    expect(result.text).toContain("Read-only file system");
    expect(result.text).toContain("CapEff:\t0000000000000000");
  });
});

describe("resource limits", () => {
  it("contains a fork bomb, reports the process limit and stays usable", async () => {
    const bomb = await s.run("shell_run", {
      command: "bomb() { bomb | bomb & }; bomb; sleep 2",
      timeout_ms: 4_000,
    });
    expect(bomb.text).toMatch(/process limit was reached|timed out/);
    const after = await s.run("shell_run", { command: "echo alive" });
    expect(after.text).toContain("alive");
    expect(after.is_error).toBe(false);
  });

  it("kills a memory hog at the memory limit, reports it, and stays usable", async () => {
    const hog = await s.run("shell_run", {
      command: 'python3 -c "chunks = []\nwhile True: chunks.append(bytearray(16 * 1024 * 1024))"',
      timeout_ms: 20_000,
    });
    expect(hog.is_error).toBe(true);
    expect(hog.text).toMatch(/memory limit|MemoryError|SIGKILL/);
    expect((await s.run("shell_run", { command: "echo still-here" })).text).toContain("still-here");
  });

  it("has no network", async () => {
    const result = await s.run("shell_run", {
      command:
        "python3 -c \"import socket\ntry:\n  socket.create_connection(('1.1.1.1', 53), timeout=2); print('CONNECTED')\nexcept OSError as e: print('NO-NETWORK', e)\"; cat /proc/net/dev | tail -n +3 | cut -d: -f1",
    });
    expect(result.text).toContain("NO-NETWORK");
    expect(result.text).not.toContain("CONNECTED");
    expect(result.text.trim().split("\n")).toContain("    lo");
    expect(result.text).not.toContain("eth0");
  });

  it("interrupt kills a long command and everything it started", async () => {
    const callId = s.nextCallId();
    const running = s.call(
      "shell_run",
      { command: "sleep 100 & sleep 100 & sleep 100; echo never" },
      { callId },
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await s.manager.cancel(s.tenantId, s.sessionId, callId)).toBe(true);
    const result = await running;
    expect(result.outcome).toBe("completed");
    if (result.outcome !== "completed") return;
    expect(result.content[0]).toMatchObject({ type: "text" });
    expect(JSON.stringify(result.content)).toContain("interrupted");
    const left = await s.run("shell_run", { command: "ps -eo comm | grep -c '^sleep$' || true" });
    expect(left.text.trim().split("\n")[0]).toBe("0");
  });

  it("interrupt stops a persistent shell's command and keeps the shell", async () => {
    await s.run("shell_exec", { command: "cd /workspace/in && export KEPT=1" });
    const callId = s.nextCallId();
    const running = s.call("shell_exec", { command: "sleep 100; echo never" }, { callId });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await s.manager.cancel(s.tenantId, s.sessionId, callId)).toBe(true);
    const result = await running;
    expect(JSON.stringify(result)).toContain("interrupted");
    const after = await s.run("shell_exec", { command: "pwd; echo $KEPT" });
    expect(after.text).toContain("/workspace/in\n1");
  });

  it("interrupt of a shell builtin loop costs the shell but keeps its cwd and env", async () => {
    const callId = s.nextCallId();
    const running = s.call("shell_exec", { command: "while :; do :; done" }, { callId });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await s.manager.cancel(s.tenantId, s.sessionId, callId);
    const result = await running;
    expect(JSON.stringify(result)).toContain("interrupted");
    const after = await s.run("shell_exec", { command: "pwd; echo $KEPT" });
    expect(after.text).toContain("/workspace/in\n1");
  });
});

describe("sessions", () => {
  it("cannot see each other's files", async () => {
    const other = new SessionDriver(s.manager);
    await other.ensure();
    await s.run("write", { path: "secret-of-first.txt", content: "mine\n" });
    const listing = await other.run("shell_run", {
      command: "ls -a /workspace; find / -name 'secret-of-first.txt' 2>/dev/null | wc -l",
    });
    expect(listing.text).not.toContain("secret-of-first.txt");
    expect(listing.text).toContain("\n0\n");
    expect((await other.run("read", { path: "secret-of-first.txt" })).result).toMatchObject({
      code: "path_not_found",
    });
    await s.manager.release(other.sessionId);
  });
});
