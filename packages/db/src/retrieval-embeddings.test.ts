import type { SessionEvent } from "@wakeloop/contracts";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexSessionEvents } from "./event-index";
import { newId } from "./ids";
import { writeMemory } from "./memory-store";
import {
  claimEmbeddingWork,
  configureEmbeddings,
  type EmbeddingKind,
  embeddingBacklog,
  readVectors,
  readVectorWindow,
  storeEmbeddings,
} from "./retrieval-embeddings";

// The embedding queue and vectors (migrations 0025, 0026, 0029) in this file's own database: queued per model
// while a replica keeps that model registered, claimed with a retry time, stored once per model,
// re-queued for a new model or a new content.

let testDb: TestDatabase;
let agent: SeededAgent;
let sessionId: string;
const limits = { maxEntryBytes: 4_096, maxStoreBytes: 65_536 };
/** A registration that outlives every test here. */
const TTL = 10 * 60_000;
const configure = (model: string | null, ttlMs = TTL) => configureEmbeddings(testDb.appDb, model, ttlMs);
const claim = (model: string, retryMs = 60_000) =>
  claimEmbeddingWork(testDb.appDb, { model, maxRows: 10, retryMs, maxAttempts: 3 });
/** Every due row of `model`, claimed. */
async function drain(model: string) {
  const rows = [];
  for (let batch = await claim(model); batch.length > 0; batch = await claim(model)) rows.push(...batch);
  return rows;
}
/** Rows of `model` in the queue, claimed or not (read as the owner, beside the definer functions). */
async function queuedFor(model: string): Promise<number> {
  const result = await sql<{ rows: string }>`
    SELECT count(*) AS rows FROM embedding_backlog WHERE model = ${model}`.execute(testDb.db);
  return Number(result.rows[0]?.rows);
}
/** The vectors a search would rank in `model`: which (with their stamps), then their bytes. */
async function window(model: string, kinds: EmbeddingKind[]) {
  const stamps = await readVectorWindow(testDb.appDb, agent, {
    model,
    window: 10,
    kinds,
    memory: {},
    candidates: [],
  });
  const vectors = await readVectors(testDb.appDb, agent, model, stamps);
  expect(vectors.map((row) => row.stamp).sort()).toEqual(stamps.map((row) => row.stamp).sort());
  return vectors.map(({ stamp: _stamp, ...row }) => row);
}

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
  it("queues nothing while no model is registered, then what exists, per model, with a vector per model", async () => {
    expect(await configure(null)).toBe(0);
    const eventId = await indexMessage("first message");
    expect(await embeddingBacklog(testDb.appDb, 3)).toEqual({ pending: 0, failed: 0 });
    expect(await configure("m1")).toBe(1);
    // The same model again (a renewal, another replica) queues nothing more.
    expect(await configure("m1")).toBe(0);
    const [work, ...rest] = await claim("m1");
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
    expect(await claim("m1")).toEqual([]);
    if (work === undefined) throw new Error("nothing claimed");
    await storeEmbeddings(testDb.appDb, "m1", [{ ...work, vector: Float32Array.of(0.5, -1, 2) }]);
    expect(await embeddingBacklog(testDb.appDb, 3)).toEqual({ pending: 0, failed: 0 });
    expect(await window("m1", ["event"])).toEqual([
      { kind: "event", ref: eventId, target: "", vector: Float32Array.of(0.5, -1, 2) },
    ]);
    // Another model has no vector of it yet: queued for that model only; its vector does not replace m1's.
    expect(await configure("m2")).toBe(1);
    expect(await claim("m1")).toEqual([]);
    const [other] = await claim("m2");
    if (other === undefined) throw new Error("nothing claimed for m2");
    await storeEmbeddings(testDb.appDb, "m2", [{ ...other, vector: Float32Array.of(3, 4) }]);
    expect(await window("m1", ["event"])).toEqual([
      { kind: "event", ref: eventId, target: "", vector: Float32Array.of(0.5, -1, 2) },
    ]);
    expect(await window("m2", ["event"])).toEqual([
      { kind: "event", ref: eventId, target: "", vector: Float32Array.of(3, 4) },
    ]);
    // A new event is queued once for each registered model; a replica without embeddings changes nothing.
    expect(await configure(null)).toBe(0);
    const next = await indexMessage("second message");
    expect((await drain("m1")).map((row) => row.ref)).toEqual([next]);
    expect((await drain("m2")).map((row) => row.ref)).toEqual([next]);
  });

  it("drops a model no replica renewed, with its queue; registered again, it queues what it missed", async () => {
    const missedBefore = await indexMessage("indexed before m5");
    await configure("m5", 1_500);
    expect(await queuedFor("m5")).toBeGreaterThan(0);
    // Any replica's start-up or renewal sweeps a lapsed model; until then its rows wait.
    await expect
      .poll(
        async () => {
          await configure(null);
          return queuedFor("m5");
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(0);
    const missedAfter = await indexMessage("indexed while m5 is off");
    expect(await queuedFor("m5")).toBe(0);
    expect(await configure("m5")).toBeGreaterThanOrEqual(2);
    const refs = (await drain("m5")).map((row) => row.ref);
    expect(refs).toEqual(expect.arrayContaining([missedBefore, missedAfter]));
  });

  it("re-queues a memory entry whose content changed after its claim", async () => {
    await configure("m3");
    await drain("m3");
    const first = await note("old words");
    const [work] = (await claim("m3")).filter((row) => row.kind === "memory");
    expect(work).toMatchObject({ ref: "workspace_memory_notes", target: "a.md", version_id: first.id });
    if (work === undefined) throw new Error("nothing claimed");
    await note("new words");
    // The vector of the claimed (old) version is stored, but the entry stays queued for its new content.
    await storeEmbeddings(testDb.appDb, "m3", [{ ...work, vector: Float32Array.of(1, 0) }]);
    const [again] = (await claim("m3")).filter((row) => row.kind === "memory");
    expect(again).toMatchObject({ target: "a.md", attempts: 1, text: "a.md: new words" });
    // The stale vector is not read: it names a version that is no longer current.
    expect(await window("m3", ["memory"])).toEqual([]);
  });

  it("gives up on a row after its attempts and counts it failed", async () => {
    await configure("m4");
    await drain("m4");
    await indexMessage("never embedded");
    for (let attempt = 1; attempt <= 3; attempt++) {
      // retry 0 ms: due again at once, as after the retry time.
      const rows = await claim("m4", 0);
      expect(rows.map((row) => row.attempts)).toEqual([attempt]);
    }
    expect(await claim("m4", 0)).toEqual([]);
    expect(await embeddingBacklog(testDb.appDb, 3)).toMatchObject({ failed: 1 });
  });

  it("queues skills with their description but never notepads, written before or after a model is on", async () => {
    const write = (store: string, target: string, metadata: Record<string, unknown> = {}) =>
      writeMemory(
        testDb.appDb,
        agent,
        {
          store,
          target,
          content: `${target} body`,
          metadata,
          author: { kind: "tool", session_id: sessionId, wake_id: null, tool_call_id: null },
        },
        limits,
      );
    await write("skills", "early-skill", { description: "Rotates the staging password", enabled: true });
    await write("notepad", sessionId);
    await configure("m6");
    await write("skills", "late-skill", { description: "", enabled: true });
    // Earlier tests' entries are queued for the new model too: only the two tool-kept stores are looked at.
    const texts = (await drain("m6"))
      .filter((row) => row.ref === "skills" || row.ref === "notepad")
      .map((row) => `${row.ref}/${row.target}: ${row.text}`);
    expect(texts.sort()).toEqual([
      "skills/early-skill: early-skill: Rotates the staging password\nearly-skill body",
      "skills/late-skill: late-skill: late-skill body",
    ]);
  });
});
