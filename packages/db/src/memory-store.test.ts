import type { MemoryAuthor } from "@wakeloop/contracts";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  listMemoryEntries,
  listMemoryStores,
  listMemoryVersions,
  readMemoryEntry,
  readMemoryVersion,
  recordedMemoryCall,
  recordMemoryCall,
  searchMemory,
  writeMemory,
} from "./memory-store";
import { withTenant } from "./tenant-scope";

let testDb: TestDatabase;
let seeded: SeededAgent;
let sibling: SeededAgent;
let other: SeededAgent;

const limits = { maxEntryBytes: 1_000, maxStoreBytes: 2_500 };
const author = (toolCallId: string): MemoryAuthor => ({
  kind: "tool",
  session_id: "sesn_a",
  wake_id: "wake_a",
  tool_call_id: toolCallId,
});

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 6 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
  // A second agent of the same tenant.
  await testDb.db
    .insertInto("agents")
    .values({ id: "agent_sibling", tenant_id: seeded.tenantId, name: "sibling", latest_version: 1 })
    .execute();
  sibling = { ...seeded, agentId: "agent_sibling" };
});
afterAll(() => testDb.drop());

const scopeOf = (agent: SeededAgent) => ({ tenantId: agent.tenantId, agentId: agent.agentId });

describe("memory store", () => {
  it("versions every write immutably and reads current and past versions", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    const first = await writeMemory(
      db,
      scope,
      {
        store: "workspace_memory_notes",
        target: "deploy.md",
        content: "deploy with make ship",
        author: author("t1"),
      },
      limits,
    );
    const second = await writeMemory(
      db,
      scope,
      {
        store: "workspace_memory_notes",
        target: "deploy.md",
        content: "deploy with make release",
        expectedVersionId: first.id,
        author: author("t2"),
      },
      limits,
    );
    expect(second.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second.author).toMatchObject({ kind: "tool", session_id: "sesn_a", tool_call_id: "t2" });
    const entry = await readMemoryEntry(db, scope, "workspace_memory_notes", "deploy.md");
    expect(entry).toMatchObject({ content: "deploy with make release", version_id: second.id });
    const versions = await listMemoryVersions(db, scope, "workspace_memory_notes", "deploy.md", {
      limit: 10,
    });
    expect(versions.map((v) => v.id)).toEqual([second.id, first.id]);
    expect((await readMemoryVersion(db, scope, first.id))?.content).toBe("deploy with make ship");
    expect(await listMemoryStores(db, scope)).toEqual([
      { store: "workspace_memory_notes", entries: 1, bytes: 24 },
    ]);
  });

  it("refuses a stale expected version and writes nothing", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    const base = await writeMemory(
      db,
      scope,
      { store: "notes_race", target: "plan", content: "v1", author: author("r0") },
      limits,
    );
    // Two writers read the same version and write concurrently: exactly one wins.
    const attempts = await Promise.allSettled(
      ["a", "b"].map((who) =>
        writeMemory(
          db,
          scope,
          {
            store: "notes_race",
            target: "plan",
            content: who,
            expectedVersionId: base.id,
            author: author(who),
          },
          limits,
        ),
      ),
    );
    expect(attempts.filter((a) => a.status === "fulfilled")).toHaveLength(1);
    const failed = attempts.find((a) => a.status === "rejected");
    expect(failed?.status === "rejected" && failed.reason).toMatchObject({ code: "memory_version_conflict" });
    expect(await listMemoryVersions(db, scope, "notes_race", "plan", { limit: 10 })).toHaveLength(2);
    // null means "only if absent".
    await expect(
      writeMemory(
        db,
        scope,
        { store: "notes_race", target: "plan", content: "x", expectedVersionId: null, author: author("r3") },
        limits,
      ),
    ).rejects.toMatchObject({ code: "memory_version_conflict" });
  });

  it("enforces entry and store size limits with clear errors", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    const write = (target: string, size: number) =>
      writeMemory(
        db,
        scope,
        { store: "bulk", target, content: "x".repeat(size), author: author(target) },
        limits,
      );
    await expect(write("big", 1_001)).rejects.toMatchObject({ code: "memory_entry_too_large" });
    await write("one", 1_000);
    await write("two", 1_000);
    await expect(write("three", 600)).rejects.toMatchObject({
      code: "memory_store_full",
      message: expect.stringContaining("at most 2500 bytes"),
    });
    // Replacing an entry counts its new size, not both.
    await write("two", 900);
    expect(await readMemoryEntry(db, scope, "bulk", "three")).toBeNull();
  });

  it("deletes the live entry and keeps a deleted version", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    await writeMemory(
      db,
      scope,
      { store: "gone", target: "x", content: "bye", author: author("d1") },
      limits,
    );
    const removed = await writeMemory(
      db,
      scope,
      { store: "gone", target: "x", content: "", delete: true, author: author("d2") },
      limits,
    );
    expect(removed.deleted).toBe(true);
    expect(await readMemoryEntry(db, scope, "gone", "x")).toBeNull();
    expect(await listMemoryEntries(db, scope, "gone", { limit: 5 })).toEqual([]);
    await expect(
      writeMemory(
        db,
        scope,
        { store: "gone", target: "x", content: "", delete: true, author: author("d3") },
        limits,
      ),
    ).rejects.toMatchObject({ code: "memory_not_found" });
  });

  it("searches with websearch syntax, falls back to trigrams, and stays inside the agent", async () => {
    const scope = scopeOf(seeded);
    const db = testDb.appDb;
    await writeMemory(
      db,
      scope,
      {
        store: "workspace_memory_notes",
        target: "postgres-tuning.md",
        content: "Raise shared_buffers before the nightly vacuum; the checkout service timed out otherwise.",
        author: author("s1"),
      },
      limits,
    );
    const hits = await searchMemory(db, scope, { query: '"nightly vacuum" -redis', limit: 5 });
    expect(hits[0]).toMatchObject({ target: "postgres-tuning.md", match: "full_text" });
    expect(hits[0]?.snippet).toContain("<b>vacuum</b>");
    const fragment = await searchMemory(db, scope, { query: "shared_buff", limit: 5 });
    expect(fragment[0]).toMatchObject({ target: "postgres-tuning.md", match: "trigram" });
    expect(await searchMemory(db, scope, { query: "vacuum", stores: ["bulk"], limit: 5 })).toEqual([]);
    expect(await searchMemory(db, scopeOf(sibling), { query: "vacuum", limit: 5 })).toEqual([]);
    // Another tenant naming this agent finds nothing either.
    expect(
      await searchMemory(
        db,
        { tenantId: other.tenantId, agentId: seeded.agentId },
        { query: "vacuum", limit: 5 },
      ),
    ).toEqual([]);
  });

  it("records a call's result once per tool call id", async () => {
    const db = testDb.appDb;
    await withTenant(db, seeded.tenantId, async (trx) => {
      expect(await recordedMemoryCall(trx, seeded.tenantId, "tcall_1")).toBeUndefined();
      await recordMemoryCall(trx, seeded.tenantId, {
        toolCallId: "tcall_1",
        tool: "memory_write",
        result: { ok: 1 },
      });
    });
    expect(await recordedMemoryCall(db, seeded.tenantId, "tcall_1")).toEqual({ ok: 1 });
    expect(await recordedMemoryCall(db, other.tenantId, "tcall_1")).toBeUndefined();
  });
});
