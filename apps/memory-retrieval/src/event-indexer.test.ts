import { type Bus, connectBus } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import { createSession, newId } from "@wakeloop/db";
import { createLogger } from "@wakeloop/telemetry";
import {
  cleanupPrefix,
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventIndexConsumers, startEventIndexer } from "./event-indexer";
import { executeMemoryCall } from "./memory-server";

// Against real Postgres and NATS (this file's own database and subject prefix): committed events reach
// the search index through the events stream, and the retrieval tools read it back for the same agent only.

let testDb: TestDatabase;
let bus: Bus;
let indexer: { stop(): Promise<void> };
let agent: SeededAgent;
let stranger: SeededAgent;
let sessionA: string;
let sessionB: string;
let strangerSession: string;
let seq = 0;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 6 });
  agent = await seedAgent(testDb.db);
  stranger = await seedAgent(testDb.db);
  sessionA = (await seedSession(testDb.db, agent)).id;
  sessionB = (await seedSession(testDb.db, agent)).id;
  strangerSession = (await seedSession(testDb.db, stranger)).id;
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "indexer-test" });
  const log = createLogger({ service: "indexer-test", level: "silent" });
  indexer = await startEventIndexer({ db: testDb.appDb, bus, log, concurrency: 4, batchIntervalMs: 10 });
});

afterAll(async () => {
  await indexer.stop();
  await cleanupPrefix(bus.jsm, bus.subjects.prefix);
  await bus.close();
  await testDb.drop();
});

async function commit(owner: SeededAgent, event: SessionEvent): Promise<void> {
  await bus.publish(bus.catalog.events, [owner.tenantId, event.session_id, event.type], event, {
    msgId: event.id,
  });
}

const message = (sessionId: string, text: string): SessionEvent => ({
  id: newId("event"),
  session_id: sessionId,
  seq: ++seq,
  processed_at: null,
  created_at: new Date().toISOString(),
  type: "user.message",
  content: [{ type: "text", text }],
});

function call(
  owner: SeededAgent,
  sessionId: string,
  tool: "retrieval_search" | "session_search_context" | "session_search_traces",
  input: unknown,
) {
  return executeMemoryCall(
    testDb.appDb,
    { maxEntryBytes: 4_096, maxStoreBytes: 16_384 },
    {
      tenant_id: owner.tenantId,
      agent_id: owner.agentId,
      session_id: sessionId,
      wake_id: "wake_one",
      tool_call_id: newId("toolCall"),
      tool,
      input,
    },
  );
}

async function hitsOf(owner: SeededAgent, sessionId: string, query: string) {
  const response = await call(owner, sessionId, "retrieval_search", { query });
  return response.result.hits as Array<Record<string, unknown>>;
}

describe("event indexer", () => {
  it("indexes committed events from the stream, found by another session of the agent only", async () => {
    const event = message(sessionA, "the billing export runs every night at 02:00 from cron");
    await commit(agent, event);
    await commit(stranger, message(strangerSession, "billing export for the stranger"));
    await expect.poll(() => hitsOf(agent, sessionB, "billing export"), { timeout: 10_000 }).toHaveLength(1);
    const [hit] = await hitsOf(agent, sessionB, "billing export");
    expect(hit).toMatchObject({
      source: "session_event",
      session_id: sessionA,
      event_id: event.id,
      why: expect.stringMatching(/^full-text rank /),
      next_step: { tool: "session_get_events", input: { session_id: sessionA } },
    });
    expect(hit?.snippet).toContain("<b>billing</b>");
    // The session that wrote it leaves itself out unless it asks.
    expect(await hitsOf(agent, sessionA, "billing export")).toEqual([]);
    const own = await call(agent, sessionA, "session_search_context", {
      query: "billing",
      include_current_session: true,
    });
    expect((own.result.hits as unknown[]).length).toBe(1);
    // The stranger finds only its own.
    const theirs = await hitsOf(stranger, newId("session"), "billing export");
    expect(theirs.map((h) => h.session_id)).toEqual([strangerSession]);
  });

  it("keeps a lineage-scoped search inside the calling session's cluster", async () => {
    const child = await createSession(testDb.db, {
      tenantId: agent.tenantId,
      agentId: agent.agentId,
      agentVersion: agent.agentVersion,
      environmentId: null,
      parentSessionId: sessionA,
      title: null,
      metadata: {},
      budget: { max_total_tokens: null },
    });
    const search = (sessionId: string, lineage: string) =>
      call(agent, sessionId, "retrieval_search", { query: "billing export", sources: ["sessions"], lineage });
    const fromChild = await search(child.id, "parent");
    expect((fromChild.result.hits as Array<{ session_id: string }>).map((hit) => hit.session_id)).toEqual([
      sessionA,
    ]);
    expect((await search(child.id, "children")).result.hits).toEqual([]);
    // sessionB is no relative of sessionA.
    expect((await search(sessionB, "related")).result.hits).toEqual([]);
  });

  it("finds the agent's traces by span name or attribute, on request", async () => {
    const start = new Date();
    await testDb.db
      .insertInto("spans")
      .values({
        trace_id: "e".repeat(32),
        span_id: "f".repeat(16),
        tenant_id: agent.tenantId,
        session_id: sessionA,
        wake_id: "wake_traced",
        name: "tool kubectl_apply",
        kind: "internal",
        service_name: "harness-worker",
        start_time: start,
        end_time: new Date(start.getTime() + 40),
        status_code: "error",
        attributes: JSON.stringify({ "error.type": "sandbox_timeout" }),
        events: "[]",
      })
      .execute();
    const traces = await call(agent, sessionB, "session_search_traces", { query: "sandbox_timeout" });
    expect(traces.result.hits).toEqual([
      expect.objectContaining({
        source: "trace",
        session_id: sessionA,
        wake_id: "wake_traced",
        status: "error",
        duration_ms: 40,
        why: expect.stringMatching(/^query found in the span attributes; newest first/),
        next_step: { tool: "session_get_trace", input: { session_id: sessionA, wake_id: "wake_traced" } },
      }),
    ]);
    const mixed = await call(agent, sessionB, "retrieval_search", {
      query: "kubectl_apply",
      sources: ["traces"],
    });
    expect((mixed.result.hits as Array<{ name: string }>).map((hit) => hit.name)).toEqual([
      "tool kubectl_apply",
    ]);
    // Not searched unless named, and never for another agent.
    expect((await hitsOf(agent, sessionB, "kubectl_apply")).map((hit) => hit.source)).not.toContain("trace");
    const theirs = await call(stranger, strangerSession, "session_search_traces", {
      query: "sandbox_timeout",
    });
    expect(theirs.result.hits).toEqual([]);
  });

  it("indexes a burst in few statements, each event once, across a restart and a second replica", async () => {
    const log = createLogger({ service: "indexer-test", level: "silent" });
    // Committed while no indexer runs: the durable consumers keep them for the next one.
    await indexer.stop();
    const burst = Array.from({ length: 120 }, (_, index) =>
      message(index % 2 === 0 ? sessionA : sessionB, `burst harbour manifest number ${index}`),
    );
    for (const event of burst) await commit(agent, event);
    // Events without text are not delivered to the indexer at all.
    for (const event of burst.slice(0, 20))
      await commit(agent, { ...event, id: newId("event"), type: "session.status_running" });
    indexer = await startEventIndexer({ db: testDb.appDb, bus, log, concurrency: 256, batchIntervalMs: 10 });
    const replica = await startEventIndexer({
      db: testDb.appDb,
      bus,
      log,
      concurrency: 8,
      batchIntervalMs: 10,
    });
    try {
      // A redelivery (the same event under another message id) while both replicas run adds nothing.
      for (const event of burst.slice(0, 10))
        await bus.publish(bus.catalog.events, [agent.tenantId, event.session_id, event.type], event, {
          msgId: `${event.id}:again`,
        });
      const ids = burst.map((event) => event.id);
      // indexed_at as text: microseconds, which a Date would round to milliseconds.
      const indexed = async () =>
        (
          await sql<{ event_id: string; indexed_at: string }>`
            SELECT event_id, indexed_at::text AS indexed_at FROM session_event_index
            WHERE event_id = ANY (${ids}::text[])`.execute(testDb.db)
        ).rows;
      await expect.poll(async () => (await indexed()).length, { timeout: 20_000 }).toBe(burst.length);
      const rows = await indexed();
      expect(new Set(rows.map((row) => row.event_id)).size).toBe(burst.length);
      // One statement per batch: its rows share the statement's transaction time.
      const statements = new Set(rows.map((row) => row.indexed_at)).size;
      expect(statements).toBeLessThanOrEqual(burst.length / 2);
      // Every delivery was acked, the repeats included, and nothing but user and agent events came.
      const consumers = eventIndexConsumers(bus).map((entry) => entry.consumer?.durable ?? "");
      await expect
        .poll(
          async () => {
            const infos = await Promise.all(
              consumers.map((durable) => bus.jsm.consumers.info(bus.catalog.events.stream.name, durable)),
            );
            return infos.map((info) => [info.num_pending, info.num_ack_pending]);
          },
          { timeout: 20_000 },
        )
        .toEqual([
          [0, 0],
          [0, 0],
        ]);
      // The stream holds only user messages and the 20 status events; each message was delivered once.
      const stream = await bus.jsm.streams.info(bus.catalog.events.stream.name);
      const delivered = await Promise.all(
        consumers.map(
          async (durable) =>
            (await bus.jsm.consumers.info(bus.catalog.events.stream.name, durable)).delivered.consumer_seq,
        ),
      );
      expect(delivered).toEqual([stream.state.messages - 20, 0]);
    } finally {
      await replica.stop();
    }
  });

  it("indexes events committed one after another within the batch interval in few statements", async () => {
    await indexer.stop();
    const log = createLogger({ service: "indexer-test", level: "silent" });
    indexer = await startEventIndexer({ db: testDb.appDb, bus, log, concurrency: 256, batchIntervalMs: 200 });
    const trickle = Array.from({ length: 12 }, (_, index) =>
      message(sessionA, `trickle lantern signal number ${index}`),
    );
    // Each commit waits for the previous one's ack, as the outbox relay of a busy platform would.
    for (const event of trickle) await commit(agent, event);
    const ids = trickle.map((event) => event.id);
    const indexed = async () =>
      (
        await sql<{ indexed_at: string }>`
          SELECT indexed_at::text AS indexed_at FROM session_event_index
          WHERE event_id = ANY (${ids}::text[])`.execute(testDb.db)
      ).rows;
    await expect.poll(async () => (await indexed()).length, { timeout: 10_000 }).toBe(trickle.length);
    // One statement per batch: its rows share the statement's transaction time.
    expect(new Set((await indexed()).map((row) => row.indexed_at)).size).toBeLessThanOrEqual(3);
  });

  it("answers bad input with a tool error", async () => {
    const response = await call(agent, sessionB, "retrieval_search", { query: "", sources: ["web"] });
    expect(response.is_error).toBe(true);
    expect(response.content[0]).toMatchObject({
      text: expect.stringMatching(/^memory_invalid_input: invalid retrieval_search input/),
    });
  });
});
