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
import { indexCommittedEvents, indexSessionEvents, searchSessionEvents, searchSpans } from "./event-index";
import { newId } from "./ids";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;
let sessionA: string;
let sessionB: string;
let otherSession: string;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 4 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
  sessionA = (await seedSession(testDb.db, seeded)).id;
  sessionB = (await seedSession(testDb.db, seeded)).id;
  otherSession = (await seedSession(testDb.db, other)).id;
});
afterAll(() => testDb.drop());

const scopeOf = (agent: SeededAgent) => ({ tenantId: agent.tenantId, agentId: agent.agentId });
let seq = 0;
const envelope = (sessionId: string) => ({
  id: newId("event"),
  session_id: sessionId,
  seq: ++seq,
  processed_at: null,
  created_at: new Date().toISOString(),
});
const message = (sessionId: string, text: string): SessionEvent => ({
  ...envelope(sessionId),
  type: "user.message",
  content: [{ type: "text", text }],
});

describe("session event index", () => {
  it("indexes messages and tool calls once per event id and ranks them with websearch syntax", async () => {
    const db = testDb.appDb;
    const deploy = message(sessionA, "The staging deploy failed because the migration lock timed out");
    const toolUse: SessionEvent = {
      ...envelope(sessionA),
      type: "agent.tool_use",
      name: "bash",
      input: { command: "kubectl rollout restart deploy/api-gateway-7f3c" },
      evaluated_permission: "allow",
    };
    const status: SessionEvent = { ...envelope(sessionA), type: "session.status_running" };
    expect(await indexSessionEvents(db, seeded.tenantId, [deploy, toolUse, status])).toBe(2);
    // A redelivery adds nothing.
    expect(await indexSessionEvents(db, seeded.tenantId, [deploy])).toBe(0);

    const hits = await searchSessionEvents(db, scopeOf(seeded), {
      query: "deploy migration -canary",
      limit: 5,
    });
    expect(hits.map((hit) => hit.event_id)).toEqual([deploy.id]);
    expect(hits[0]).toMatchObject({ session_id: sessionA, type: "user.message", match: "full_text" });
    expect(hits[0]?.snippet).toContain("<b>migration</b>");
    expect(await searchSessionEvents(db, scopeOf(seeded), { query: '"lock deploy"', limit: 5 })).toEqual([]);

    // An identifier the text parser splits is found by trigram.
    const byId = await searchSessionEvents(db, scopeOf(seeded), { query: "gateway-7f3c", limit: 5 });
    expect(byId.map((hit) => [hit.event_id, hit.tool_name, hit.match])).toEqual([
      [toolUse.id, "bash", "trigram"],
    ]);
  });

  it("gives a tool result the name of its committed tool call", async () => {
    const use = {
      ...envelope(sessionA),
      type: "agent.tool_use" as const,
      name: "read_file",
      input: { path: "notes/oncall.md" },
      evaluated_permission: "allow" as const,
    };
    const { id, session_id, seq: useSeq, processed_at, created_at, ...body } = use;
    await testDb.db
      .insertInto("session_events")
      .values({
        id,
        session_id,
        seq: useSeq,
        tenant_id: seeded.tenantId,
        body: JSON.stringify(body),
        type: use.type,
        created_at,
        processed_at,
      })
      .execute();
    const result: SessionEvent = {
      ...envelope(sessionA),
      type: "agent.tool_result",
      tool_use_id: use.id,
      content: [{ type: "text", text: "pager rotation: weekly handover on mondays" }],
      is_error: false,
    };
    await indexSessionEvents(testDb.appDb, seeded.tenantId, [result]);
    const hits = await searchSessionEvents(testDb.appDb, scopeOf(seeded), {
      query: "pager handover",
      limit: 5,
    });
    expect(hits.map((hit) => [hit.event_id, hit.type, hit.tool_name])).toEqual([
      [result.id, "agent.tool_result", "read_file"],
    ]);
  });

  it("filters by session, leaves the caller's session out, and never crosses agents or tenants", async () => {
    const db = testDb.appDb;
    const inB = message(sessionB, "remember the quarterly invoice reconciliation");
    await indexSessionEvents(db, seeded.tenantId, [inB]);
    await indexSessionEvents(db, other.tenantId, [
      message(otherSession, "quarterly invoice reconciliation too"),
    ]);

    const scope = scopeOf(seeded);
    const all = await searchSessionEvents(db, scope, { query: "invoice reconciliation", limit: 5 });
    expect(all.map((hit) => hit.session_id)).toEqual([sessionB]);
    expect(
      await searchSessionEvents(db, scope, { query: "invoice", excludeSessionId: sessionB, limit: 5 }),
    ).toEqual([]);
    expect(
      await searchSessionEvents(db, scope, { query: "invoice", sessionIds: [sessionA], limit: 5 }),
    ).toEqual([]);
    const theirs = await searchSessionEvents(db, scopeOf(other), { query: "invoice", limit: 5 });
    expect(theirs.map((hit) => hit.session_id)).toEqual([otherSession]);
    // Another tenant's event named with this tenant is dropped: its session is not this tenant's.
    expect(await indexSessionEvents(db, seeded.tenantId, [message(otherSession, "smuggled invoice")])).toBe(
      0,
    );
    // Another agent of the same tenant finds nothing.
    expect(
      await searchSessionEvents(
        db,
        { tenantId: seeded.tenantId, agentId: "agent_none" },
        { query: "invoice", limit: 5 },
      ),
    ).toEqual([]);
  });

  it("indexes a batch of several tenants' events in one call, each only under its own tenant", async () => {
    const db = testDb.appDb;
    const ours = message(sessionA, "batched lighthouse inspection notes");
    const theirs = message(otherSession, "batched lighthouse keeper rota");
    const smuggled = message(otherSession, "batched lighthouse smuggled under the wrong tenant");
    const batch = [
      { tenantId: seeded.tenantId, event: ours },
      { tenantId: other.tenantId, event: theirs },
      { tenantId: seeded.tenantId, event: smuggled },
      {
        tenantId: seeded.tenantId,
        event: { ...envelope(sessionA), type: "session.status_running" } as const,
      },
    ];
    expect(await indexCommittedEvents(db, batch)).toBe(2);
    // The same batch again (a redelivery) adds nothing.
    expect(await indexCommittedEvents(db, batch)).toBe(0);
    const search = (agent: SeededAgent) =>
      searchSessionEvents(db, scopeOf(agent), { query: "batched lighthouse", limit: 10 });
    expect((await search(seeded)).map((hit) => hit.event_id)).toEqual([ours.id]);
    expect((await search(other)).map((hit) => hit.event_id)).toEqual([theirs.id]);
  });

  it("finds the agent's spans by name and attribute", async () => {
    const start = new Date();
    await testDb.db
      .insertInto("spans")
      .values([
        {
          trace_id: "a".repeat(32),
          span_id: "b".repeat(16),
          tenant_id: seeded.tenantId,
          session_id: sessionA,
          name: "tool bash",
          kind: "internal",
          service_name: "harness-worker",
          start_time: start,
          end_time: new Date(start.getTime() + 25),
          status_code: "error",
          attributes: JSON.stringify({ "wakeloop.tool.name": "bash", "error.type": "sandbox_timeout" }),
          events: "[]",
        },
        {
          trace_id: "c".repeat(32),
          span_id: "d".repeat(16),
          tenant_id: other.tenantId,
          session_id: otherSession,
          name: "tool bash",
          kind: "internal",
          service_name: "harness-worker",
          start_time: start,
          end_time: start,
          status_code: "ok",
          attributes: "{}",
          events: "[]",
        },
      ])
      .execute();
    const byName = await searchSpans(testDb.appDb, scopeOf(seeded), { query: "tool bash", limit: 5 });
    expect(byName).toEqual([
      expect.objectContaining({ session_id: sessionA, matched: "name", duration_ms: 25 }),
    ]);
    const byAttribute = await searchSpans(testDb.appDb, scopeOf(seeded), {
      query: "sandbox_timeout",
      limit: 5,
    });
    expect(byAttribute.map((hit) => hit.matched)).toEqual(["attributes"]);
    expect(await searchSpans(testDb.appDb, scopeOf(other), { query: "sandbox_timeout", limit: 5 })).toEqual(
      [],
    );
  });

  it("finds a span by its tool name, error status and exception message, never by its ids", async () => {
    const start = new Date();
    const toolCallId = newId("event");
    // As the exporter writes it (packages/telemetry span-row.ts), through the definer function.
    const span = {
      trace_id: "1".repeat(32),
      span_id: "2".repeat(16),
      tenant_id: seeded.tenantId,
      session_id: sessionB,
      wake_id: "wake_searched",
      name: "execute_tool memory_read",
      kind: "internal",
      service_name: "harness-worker",
      start_time: start.toISOString(),
      end_time: start.toISOString(),
      status_code: "error",
      status_message: "Tool Failed",
      attributes: JSON.stringify({
        "gen_ai.tool.name": "memory_read",
        "gen_ai.tool.call.id": toolCallId,
        "wakeloop.session.id": sessionB,
        "wakeloop.tenant.id": seeded.tenantId,
        retry_count: 2,
      }),
      events: JSON.stringify([
        {
          name: "exception",
          time: start.toISOString(),
          attributes: { "exception.type": "Error", "exception.message": "Store Quota Exceeded for notes" },
        },
      ]),
    };
    await sql`SELECT wl_insert_spans(${JSON.stringify([span])}::jsonb)`.execute(testDb.db);
    const search = (query: string) => searchSpans(testDb.appDb, scopeOf(seeded), { query, limit: 5 });
    const found = [expect.objectContaining({ span_id: span.span_id, wake_id: "wake_searched" })];
    expect(await search("memory_read")).toEqual(found);
    expect(await search("memory_read error")).toEqual(found);
    expect(await search("quota exceeded")).toEqual(found);
    expect(await search("tool failed")).toEqual(found);
    // Ids are left out of the search text: spans are read by trace or wake (`session_get_trace`).
    expect(await search(toolCallId)).toEqual([]);
    expect(await search(seeded.tenantId)).toEqual([]);
    const stored = await testDb.db
      .selectFrom("spans")
      .select(sql<string>`search_text`.as("search_text"))
      .where("span_id", "=", span.span_id)
      .executeTakeFirstOrThrow();
    // Attribute values in jsonb's key order (shorter keys first).
    expect(stored.search_text).toBe(
      "execute_tool memory_read error tool failed 2 memory_read exception store quota exceeded for notes",
    );
  });
});
