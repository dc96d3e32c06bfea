import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { contentHash, writeSubstrateFile } from "@wakeloop/db";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SubstrateMirror } from "./substrate-mirror";
import { RunnerFixture, silent } from "./testing/docker-fixture";
import { SessionDriver } from "./testing/session-driver";

// The agent substrate on a real runner with real containers and a real Postgres: mirrored read-only at
// /workspace/agent from the latest versions, and changed only through the resources_* tools.

let testDb: TestDatabase;
let agent: SeededAgent;
let fixture: RunnerFixture;
let announced: Array<{ tenantId: string; agentId: string }>;
const limits = { maxFileBytes: 2_048, maxAgentBytes: 8_192 };

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 6 });
}, 60_000);
afterAll(() => testDb?.drop());
beforeEach(async () => {
  agent = await seedAgent(testDb.db);
  fixture = await RunnerFixture.create();
  announced = [];
});
afterEach(() => fixture.cleanup());

async function runner() {
  const mirror = new SubstrateMirror(testDb.appDb, limits, fixture.stateDir, silent, (scope) =>
    announced.push(scope),
  );
  return { mirror, manager: await fixture.manager({ substrates: mirror }) };
}

async function session(manager: Awaited<ReturnType<typeof runner>>["manager"]) {
  const driver = new SessionDriver(manager, undefined, undefined, agent.tenantId);
  await driver.ensure(agent.agentId);
  return driver;
}

/** A resources tool's answer (its text is JSON), failing the test on an error result. */
async function answer(driver: SessionDriver, tool: Parameters<SessionDriver["run"]>[0], input: unknown) {
  const result = await driver.run(tool, input);
  expect(result.is_error, result.text).toBe(false);
  return JSON.parse(result.text) as Record<string, unknown>;
}

const scope = () => ({ tenantId: agent.tenantId, agentId: agent.agentId });
const seedAuthor = { kind: "api" as const, session_id: null, wake_id: null, tool_call_id: null };

describe("agent substrate", () => {
  it("mirrors the latest versions read-only at /workspace/agent", async () => {
    await writeSubstrateFile(
      testDb.appDb,
      scope(),
      { path: "docs/guide.md", content: "# Guide\nstep one\n", author: seedAuthor },
      limits,
    );
    const { manager, mirror } = await runner();
    const s = await session(manager);
    expect((await s.run("bash", { command: "cat /workspace/agent/docs/guide.md" })).text).toContain(
      "step one",
    );
    expect((await s.run("write", { path: "agent/x.txt", content: "no" })).result).toMatchObject({
      code: "path_read_only",
    });
    expect((await s.run("shell_run", { command: "touch /workspace/agent/x 2>&1" })).text).toContain(
      "Read-only file system",
    );
    // On the host: root-owned files readable by the sandbox user, the manifest beside the directory.
    const dir = mirror.dir(SubstrateMirror.nameOf(scope()));
    expect(((await stat(join(dir, "docs/guide.md"))).mode & 0o777).toString(8)).toBe("644");
    expect(JSON.parse(await readFile(`${dir}.json`, "utf8"))).toHaveProperty("docs/guide.md");

    // A version written elsewhere (a restore through the API) reaches the running sandbox with the
    // notice, before any further ensure.
    await writeSubstrateFile(
      testDb.appDb,
      scope(),
      { path: "docs/guide.md", content: "# Guide\nstep two\n", author: seedAuthor },
      limits,
    );
    await manager.refreshSubstrate(agent.tenantId, agent.agentId);
    expect((await s.run("bash", { command: "cat /workspace/agent/docs/guide.md" })).text).toContain(
      "step two",
    );
    // A notice for an agent this runner holds no sandbox of mirrors nothing.
    const stranger = await seedAgent(testDb.db);
    await manager.refreshSubstrate(stranger.tenantId, stranger.agentId);
    await expect(stat(mirror.dir(SubstrateMirror.nameOf(stranger)))).rejects.toMatchObject({
      code: "ENOENT",
    });
  }, 120_000);

  it("stages, compares, promotes, lists, reads and restores versions", async () => {
    const first = await writeSubstrateFile(
      testDb.appDb,
      scope(),
      { path: "notes.md", content: "alpha\nbeta\n", author: seedAuthor },
      limits,
    );
    const { manager } = await runner();
    const s = await session(manager);
    const staged = await answer(s, "resources_stage_from_substrate", { path: "/workspace/agent/notes.md" });
    expect(staged).toMatchObject({
      path: "notes.md",
      workspacePath: "/workspace/notes.md",
      alreadyStaged: false,
    });
    await s.run("shell_run", { command: "sed -i 's/beta/gamma/' notes.md" });
    // Staging again would lose the edit: refused without overwrite.
    const again = await s.run("resources_stage_from_substrate", { path: "notes.md" });
    expect(again.result).toMatchObject({ code: "workspace_copy_exists" });

    const compared = await answer(s, "resources_compare_with_substrate", { path: "notes.md" });
    expect(compared).toMatchObject({
      identical: false,
      latestVersionId: first.version.id,
      expectedContentHash: contentHash("alpha\nbeta\n"),
      workspaceContentHash: contentHash("alpha\ngamma\n"),
      additions: 1,
      deletions: 1,
    });
    expect(compared.diff).toContain("-beta");
    expect(compared.diff).toContain("+gamma");

    const promoteCall = s.nextCallId();
    const promotedRun = await s.run(
      "resources_promote_to_substrate",
      { path: "notes.md", expectedVersionId: first.version.id },
      { callId: promoteCall },
    );
    expect(promotedRun.is_error, promotedRun.text).toBe(false);
    const promoted = JSON.parse(promotedRun.text) as Record<string, unknown>;
    expect(promoted).toMatchObject({
      previousVersionId: first.version.id,
      substratePath: "/workspace/agent/notes.md",
      author: { kind: "tool", sessionId: s.sessionId, toolCallId: promoteCall },
    });
    expect((await s.run("bash", { command: "cat /workspace/agent/notes.md" })).text).toContain("gamma");
    expect(announced).toEqual([scope()]);

    // A stale expectedVersionId writes nothing.
    const stale = await s.run("resources_promote_to_substrate", {
      path: "notes.md",
      expectedVersionId: first.version.id,
    });
    expect(stale.result).toMatchObject({
      code: "substrate_version_conflict",
      latest_version_id: promoted.versionId,
    });

    const listed = await answer(s, "resources_list_versions", { path: "notes.md" });
    expect(listed.latestVersionId).toBe(promoted.versionId);
    expect((listed.versions as Array<{ versionId: string }>).map((v) => v.versionId)).toEqual([
      promoted.versionId,
      first.version.id,
    ]);
    const read = await answer(s, "resources_read_version", { versionId: first.version.id });
    expect(read).toMatchObject({ content: "alpha\nbeta\n", path: "notes.md" });

    const restored = await answer(s, "resources_restore_version", {
      versionId: first.version.id,
      expectedVersionId: promoted.versionId,
    });
    expect(restored).toMatchObject({
      restoredFromVersionId: first.version.id,
      previousVersionId: promoted.versionId,
    });
    expect((await s.run("bash", { command: "cat /workspace/agent/notes.md" })).text).toContain("beta");
    expect(announced).toEqual([scope(), scope()]);
  }, 120_000);

  it("records one version per tool call id and enforces the size limit", async () => {
    const { manager } = await runner();
    const s = await session(manager);
    await s.run("write", { path: "new.md", content: "fresh\n" });
    const callId = s.nextCallId();
    const once = await s.run("resources_promote_to_substrate", { path: "new.md" }, { callId });
    const twice = await s.run("resources_promote_to_substrate", { path: "new.md" }, { callId });
    expect(twice.replayed).toBe(true);
    expect(JSON.parse(twice.text).versionId).toBe(JSON.parse(once.text).versionId);
    const versions = await answer(s, "resources_list_versions", { path: "new.md" });
    expect(versions.versions).toHaveLength(1);

    await s.run("shell_run", { command: "head -c 3000 /dev/zero | tr '\\0' x > big.md" });
    const big = await s.run("resources_promote_to_substrate", { path: "big.md" });
    expect(big.result).toMatchObject({ code: "substrate_file_too_large" });
    expect((await s.run("resources_list_versions", { path: "big.md" })).result).toMatchObject({
      code: "resource_not_found",
    });
  }, 120_000);

  it("shows a promotion to the agent's other sessions and nothing to another agent", async () => {
    const { manager } = await runner();
    const writer = await session(manager);
    const reader = await session(manager);
    await writer.run("write", { path: "shared.md", content: "from the writer\n" });
    await answer(writer, "resources_promote_to_substrate", { path: "shared.md" });
    // The mirror is one directory per agent on the runner: the other session sees it at once.
    expect((await reader.run("bash", { command: "cat /workspace/agent/shared.md" })).text).toContain(
      "from the writer",
    );

    const stranger = await seedAgent(testDb.db);
    const other = new SessionDriver(manager, undefined, undefined, stranger.tenantId);
    await other.ensure(stranger.agentId);
    expect((await other.run("ls", { path: "agent" })).text).toBe("(empty directory)");
    expect((await other.run("resources_list_versions", { path: "shared.md" })).result).toMatchObject({
      code: "resource_not_found",
    });
  }, 120_000);

  it("answers that a sandbox without an agent has no substrate", async () => {
    const { manager } = await runner();
    const s = new SessionDriver(manager, undefined, undefined, agent.tenantId);
    await s.ensure();
    expect((await s.run("resources_list_versions", { path: "x.md" })).result).toMatchObject({
      code: "substrate_unavailable",
    });
  }, 120_000);
});
