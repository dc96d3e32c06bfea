import type { SessionEvent } from "@wakeloop/contracts";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexSessionEvents } from "./event-index";
import { newId } from "./ids";
import { writeMemory } from "./memory-store";
import {
  claimEmbeddingWork,
  configureEmbeddings,
  embeddingBacklog,
  readVectorWindow,
  storeEmbeddings,
} from "./retrieval-embeddings";

// The embedding queue and vectors (migrations 0025, 0026) in this file's own database: queued only while a
// model is on, claimed with a retry time, stored once, re-queued for a new model or a new content.

let testDb: TestDatabase;
let agent: SeededAgent;
let sessionId: string;
const limits = { maxEntryBytes: 4_096, maxStoreBytes: 65_536 };
const claim = () => claimEmbeddingWork(testDb.appDb, { maxRows: 10, retryMs: 60_000, maxAttempts: 3 });
const backlog = () => embeddingBacklog(testDb.appDb, 3);

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 4 });
  agent = await seedAgent(testDb.db);
  sessionId = (await seedSession(testDb.db, agent)).id;
});
afterAll(() => testDb.drop());

async function indexMessage(text: string): Promise<string> {
  const event: SessionEvent = {
    id: newId("event"),
    session_id: sessionId,
    seq: 1,
    processed_at: null,
    created_at: new Date().toISOString(),
    type: "user.message",
    content: [{ type: "text", text }],
  };
  await indexSessionEvents(testDb.appDb, agent.tenantId, [event]);
  return event.id;
}

const note = (content: string) =>
  writeMemory(
    testDb.appDb,
    agent,
    {
      store: "workspace_memory_notes",
      target: "a.md",
      content,
      author: { kind: "tool", session_id: sessionId, wake_id: null, tool_call_id: null },
    },
    limits,
  );

describe("embedding queue", () => {
  it("queues nothing while embeddings are off, and what exists once a model is on", async () => {
    await configureEmbeddings(testDb.appDb, null);
    const eventId = await indexMessage("first message");
    expect(await backlog()).toEqual({ pending: 0, failed: 0 });
    expect(await configureEmbeddings(testDb.appDb, "m1")).toBe(1);
    // The same model again queues nothing more.
    expect(await configureEmbeddings(testDb.appDb, "m1")).toBe(0);
    const [work, ...rest] = await claim();
    expect(rest).toEqual([]);
    expect(work).toMatchObject({
      tenant_id: agent.tenantId,
      kind: "event",
      ref: eventId,
      target: "",
      attempts: 1,
      session_id: sessionId,
      text: "first message",
    });
    // Claimed: not due again until its retry time.
    expect(await claim()).toEqual([]);
    if (work === undefined) throw new Error("nothing claimed");
    await storeEmbeddings(testDb.appDb, "m1", [{ ...work, vector: Float32Array.of(0.5, -1, 2) }]);
    expect(await backlog()).toEqual({ pending: 0, failed: 0 });
    const stored = await readVectorWindow(testDb.appDb, agent, {
      model: "m1",
      window: 10,
      kinds: ["event"],
      memory: {},
      candidates: [],
    });
    expect(stored).toEqual([
      { kind: "event", ref: eventId, target: "", vector: Float32Array.of(0.5, -1, 2) },
    ]);
    // Another model has no vector of it yet: queued again.
    expect(await configureEmbeddings(testDb.appDb, "m2")).toBe(1);
    expect(await backlog()).toEqual({ pending: 1, failed: 0 });
  });

  it("re-queues a memory entry whose content changed after its claim, and drops the queue when off", async () => {
    await configureEmbeddings(testDb.appDb, null);
    await configureEmbeddings(testDb.appDb, "m3");
    await claimEmbeddingWork(testDb.appDb, { maxRows: 100, retryMs: 60_000, maxAttempts: 3 });
    const first = await note("old words");
    const [work] = (await claim()).filter((row) => row.kind === "memory");
    expect(work).toMatchObject({ ref: "workspace_memory_notes", target: "a.md", version_id: first.id });
    if (work === undefined) throw new Error("nothing claimed");
    await note("new words");
    // The vector of the claimed (old) version is stored, but the entry stays queued for its new content.
    await storeEmbeddings(testDb.appDb, "m3", [{ ...work, vector: Float32Array.of(1, 0) }]);
    expect(await backlog()).toMatchObject({ pending: expect.any(Number) });
    const [again] = (await claim()).filter((row) => row.kind === "memory");
    expect(again).toMatchObject({ target: "a.md", attempts: 1, text: "a.md: new words" });
    // The stale vector is not read: it names a version that is no longer current.
    const window = await readVectorWindow(testDb.appDb, agent, {
      model: "m3",
      window: 10,
      kinds: ["memory"],
      memory: {},
      candidates: [],
    });
    expect(window).toEqual([]);
    await configureEmbeddings(testDb.appDb, null);
    expect(await backlog()).toEqual({ pending: 0, failed: 0 });
  });

  it("gives up on a row after its attempts and counts it failed", async () => {
    await configureEmbeddings(testDb.appDb, "m4");
    await claimEmbeddingWork(testDb.appDb, { maxRows: 100, retryMs: 60_000, maxAttempts: 3 });
    await indexMessage("never embedded");
    for (let attempt = 1; attempt <= 3; attempt++) {
      // retry 0 ms: due again at once, as after the retry time.
      const rows = await claimEmbeddingWork(testDb.appDb, { maxRows: 10, retryMs: 0, maxAttempts: 3 });
      expect(rows.map((row) => row.attempts)).toEqual([attempt]);
    }
    expect(await claimEmbeddingWork(testDb.appDb, { maxRows: 10, retryMs: 0, maxAttempts: 3 })).toEqual([]);
    expect(await backlog()).toMatchObject({ failed: 1 });
  });

  it("queues skills (migration 0026) but never notepads, whether written before or after a model is on", async () => {
    await configureEmbeddings(testDb.appDb, null);
    const write = (store: string, target: string) =>
      writeMemory(
        testDb.appDb,
        agent,
        {
          store,
          target,
          content: `${target} body`,
          author: { kind: "tool", session_id: sessionId, wake_id: null, tool_call_id: null },
        },
        limits,
      );
    await write("skills", "early-skill");
    await write("notepad", sessionId);
    expect(await backlog()).toEqual({ pending: 0, failed: 0 });
    await configureEmbeddings(testDb.appDb, "m4");
    await write("skills", "late-skill");
    const queued = async () => {
      const rows = [];
      for (let batch = await claim(); batch.length > 0; batch = await claim()) rows.push(...batch);
      // Earlier tests' note is queued for the new model too: only the two tool-kept stores are looked at.
      return rows
        .filter((row) => row.ref === "skills" || row.ref === "notepad")
        .map((row) => `${row.ref}/${row.target}`);
    };
    expect((await queued()).sort()).toEqual(["skills/early-skill", "skills/late-skill"]);
    await configureEmbeddings(testDb.appDb, null);
  });
});
