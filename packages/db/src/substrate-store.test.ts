import type { MemoryAuthor } from "@wakeloop/contracts";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentHash } from "./memory-store";
import {
  listSubstrateFiles,
  listSubstrateVersions,
  readSubstrateFile,
  readSubstrateVersion,
  restoreSubstrateVersion,
  substrateContents,
  writeSubstrateFile,
} from "./substrate-store";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;

const limits = { maxFileBytes: 100, maxAgentBytes: 250 };
const author = (toolCallId: string | null): MemoryAuthor => ({
  kind: toolCallId === null ? "api" : "tool",
  session_id: toolCallId === null ? null : "sesn_a",
  wake_id: toolCallId === null ? null : "wake_a",
  tool_call_id: toolCallId,
});

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 6 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

const scopeOf = (agent: SeededAgent) => ({ tenantId: agent.tenantId, agentId: agent.agentId });

describe("substrate store", () => {
  it("versions each write, reads latest and past versions, and restores an old one as a new version", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    const first = await writeSubstrateFile(
      db,
      scope,
      { path: "guide.md", content: "step one", author: author("tc_1") },
      limits,
    );
    expect(first).toMatchObject({ previousVersionId: null, replayed: false });
    expect(first.version).toMatchObject({
      path: "guide.md",
      content_hash: contentHash("step one"),
      size_bytes: 8,
      restored_from_version_id: null,
      author: { kind: "tool", session_id: "sesn_a", wake_id: "wake_a", tool_call_id: "tc_1" },
    });
    const second = await writeSubstrateFile(
      db,
      scope,
      {
        path: "guide.md",
        content: "step two",
        expectedVersionId: first.version.id,
        author: author("tc_2"),
      },
      limits,
    );
    expect(second.previousVersionId).toBe(first.version.id);
    expect(await readSubstrateFile(db, scope, "guide.md")).toMatchObject({
      id: second.version.id,
      content: "step two",
    });
    expect((await listSubstrateVersions(db, scope, "guide.md", { limit: 10 })).map((v) => v.id)).toEqual([
      second.version.id,
      first.version.id,
    ]);
    expect((await readSubstrateVersion(db, scope, first.version.id))?.content).toBe("step one");

    const restored = await restoreSubstrateVersion(
      db,
      scope,
      { versionId: first.version.id, expectedContentHash: contentHash("step two"), author: author(null) },
      limits,
    );
    expect(restored.version).toMatchObject({
      path: "guide.md",
      restored_from_version_id: first.version.id,
      content_hash: first.version.content_hash,
      author: { kind: "api", tool_call_id: null },
    });
    expect(await listSubstrateFiles(db, scope)).toEqual([
      expect.objectContaining({ path: "guide.md", version_id: restored.version.id, size_bytes: 8 }),
    ]);
    expect(await substrateContents(db, scope, [restored.version.id])).toEqual([
      { id: restored.version.id, path: "guide.md", content: "step one" },
    ]);
  });

  it("returns the version a tool call already wrote instead of writing twice", async () => {
    const scope = scopeOf(seeded);
    const write = { path: "once.md", content: "once", author: author("tc_once") };
    const first = await writeSubstrateFile(testDb.appDb, scope, write, limits);
    const again = await writeSubstrateFile(testDb.appDb, scope, { ...write, content: "other" }, limits);
    expect(again).toMatchObject({ replayed: true, version: { id: first.version.id } });
    expect(await listSubstrateVersions(testDb.appDb, scope, "once.md", { limit: 10 })).toHaveLength(1);
  });

  it("refuses a stale expected version or hash and writes nothing", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    const base = await writeSubstrateFile(
      db,
      scope,
      { path: "race.md", content: "a", author: author("r1") },
      limits,
    );
    await writeSubstrateFile(
      db,
      scope,
      { path: "race.md", content: "b", expectedVersionId: base.version.id, author: author("r2") },
      limits,
    );
    await expect(
      writeSubstrateFile(
        db,
        scope,
        { path: "race.md", content: "c", expectedVersionId: base.version.id, author: author("r3") },
        limits,
      ),
    ).rejects.toMatchObject({
      code: "substrate_version_conflict",
      details: { expected_version_id: base.version.id },
    });
    await expect(
      writeSubstrateFile(
        db,
        scope,
        { path: "race.md", content: "c", expectedContentHash: contentHash("a"), author: author("r4") },
        limits,
      ),
    ).rejects.toMatchObject({ code: "substrate_version_conflict" });
    await expect(
      writeSubstrateFile(
        db,
        scope,
        { path: "new.md", content: "c", expectedVersionId: base.version.id, author: author("r5") },
        limits,
      ),
    ).rejects.toMatchObject({ code: "substrate_version_conflict", details: { latest_version_id: null } });
    expect((await readSubstrateFile(db, scope, "race.md"))?.content).toBe("b");
    expect(await readSubstrateFile(db, scope, "new.md")).toBeNull();
  });

  it("lets one of two concurrent writers over the same version win", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    const base = await writeSubstrateFile(
      db,
      scope,
      { path: "both.md", content: "0", author: author("b0") },
      limits,
    );
    const settled = await Promise.allSettled(
      ["b1", "b2"].map((id) =>
        writeSubstrateFile(
          db,
          scope,
          { path: "both.md", content: id, expectedVersionId: base.version.id, author: author(id) },
          limits,
        ),
      ),
    );
    expect(settled.map((s) => s.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await listSubstrateVersions(db, scope, "both.md", { limit: 10 })).toHaveLength(2);
  });

  it("enforces the file and agent size limits with clear errors", async () => {
    const scope = scopeOf(other);
    const db = testDb.appDb;
    await expect(
      writeSubstrateFile(
        db,
        scope,
        { path: "big.md", content: "x".repeat(101), author: author("s1") },
        limits,
      ),
    ).rejects.toMatchObject({
      code: "substrate_file_too_large",
      message: expect.stringContaining("at most 100 bytes"),
    });
    await writeSubstrateFile(
      db,
      scope,
      { path: "a.md", content: "x".repeat(100), author: author("s2") },
      limits,
    );
    await writeSubstrateFile(
      db,
      scope,
      { path: "b.md", content: "x".repeat(100), author: author("s3") },
      limits,
    );
    await expect(
      writeSubstrateFile(db, scope, { path: "c.md", content: "x".repeat(60), author: author("s4") }, limits),
    ).rejects.toMatchObject({ code: "substrate_full", details: { total_bytes: 260, max_agent_bytes: 250 } });
    // Replacing a file counts its new size instead of its old one.
    await writeSubstrateFile(
      db,
      scope,
      { path: "a.md", content: "y".repeat(50), author: author("s5") },
      limits,
    );
    expect((await listSubstrateFiles(db, scope)).map((f) => [f.path, f.size_bytes])).toEqual([
      ["a.md", 50],
      ["b.md", 100],
    ]);
    expect(await readSubstrateFile(db, scope, "c.md")).toBeNull();
  });

  it("shows nothing of one agent to another agent or tenant", async () => {
    const mine = await writeSubstrateFile(
      testDb.appDb,
      scopeOf(seeded),
      { path: "private.md", content: "mine", author: author("p1") },
      limits,
    );
    const theirs = scopeOf(other);
    expect(await readSubstrateFile(testDb.appDb, theirs, "private.md")).toBeNull();
    expect(await readSubstrateVersion(testDb.appDb, theirs, mine.version.id)).toBeNull();
    expect(await listSubstrateVersions(testDb.appDb, theirs, "private.md", { limit: 5 })).toEqual([]);
    await expect(
      restoreSubstrateVersion(
        testDb.appDb,
        theirs,
        { versionId: mine.version.id, author: author(null) },
        limits,
      ),
    ).rejects.toMatchObject({ code: "substrate_version_not_found" });
    // Same tenant, another agent id: the scope filters by agent too.
    const sibling = { tenantId: seeded.tenantId, agentId: other.agentId };
    expect(await readSubstrateVersion(testDb.appDb, sibling, mine.version.id)).toBeNull();
  });
});
