import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeSubstrateFile } from "@wakeloop/db";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SubstrateMirror } from "./substrate-mirror";
import { silent } from "./testing/docker-fixture";

// The mirror alone, on a real Postgres and a temporary state directory (no Docker): what a sync writes,
// what it skips, and that a failing database leaves the mirror as it was.

let testDb: TestDatabase;
let agent: SeededAgent;
let stateDir: string;
const limits = { maxFileBytes: 1_024, maxAgentBytes: 4_096 };
const api = { kind: "api" as const, session_id: null, wake_id: null, tool_call_id: null };

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 4 });
});
afterAll(() => testDb?.drop());
beforeEach(async () => {
  agent = await seedAgent(testDb.db);
  stateDir = await mkdtemp(join(tmpdir(), "wl-substrate-mirror-"));
});
afterEach(() => rm(stateDir, { recursive: true, force: true }));

const scope = () => ({ tenantId: agent.tenantId, agentId: agent.agentId });
const write = (path: string, content: string) =>
  writeSubstrateFile(testDb.appDb, scope(), { path, content, author: api }, limits);

describe("SubstrateMirror", () => {
  it("writes the latest versions, then only what changed, with the manifest beside the directory", async () => {
    await write("a.md", "one");
    await write("deep/er/b.md", "bee");
    const mirror = new SubstrateMirror(testDb.appDb, limits, stateDir, silent, () => {});
    const dir = mirror.dir(await mirror.sync(scope()));
    expect(await readFile(join(dir, "a.md"), "utf8")).toBe("one");
    expect(await readFile(join(dir, "deep/er/b.md"), "utf8")).toBe("bee");
    expect(((await stat(join(dir, "deep"))).mode & 0o777).toString(8)).toBe("755");
    expect((await readdir(dir)).sort()).toEqual(["a.md", "deep"]);
    const unchanged = (await stat(join(dir, "deep/er/b.md"))).mtimeMs;

    await write("a.md", "two");
    await mirror.sync(scope());
    expect(await readFile(join(dir, "a.md"), "utf8")).toBe("two");
    // b.md's version did not change, so it was not written again.
    expect((await stat(join(dir, "deep/er/b.md"))).mtimeMs).toBe(unchanged);
    expect(Object.keys(JSON.parse(await readFile(`${dir}.json`, "utf8"))).sort()).toEqual([
      "a.md",
      "deep/er/b.md",
    ]);
  });

  it("keeps the mirror as it was when the database fails, and catches up on the next sync", async () => {
    await write("a.md", "one");
    const broken = await createTestDatabase({ max: 1 });
    await broken.drop(); // its pool is gone: every query fails
    const failing = new SubstrateMirror(broken.appDb, limits, stateDir, silent, () => {});
    const working = new SubstrateMirror(testDb.appDb, limits, stateDir, silent, () => {});
    const dir = working.dir(await working.sync(scope()));

    await write("a.md", "two");
    await expect(failing.sync(scope())).resolves.toBe(SubstrateMirror.nameOf(scope()));
    expect(await readFile(join(dir, "a.md"), "utf8")).toBe("one");
    await working.sync(scope());
    expect(await readFile(join(dir, "a.md"), "utf8")).toBe("two");
  });
});
