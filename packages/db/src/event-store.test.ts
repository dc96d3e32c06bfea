import type { SessionEvent } from "@wakeloop/contracts";
import { initialSessionState, reduceSessionState } from "@wakeloop/session-core";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append, appendAt, type NewEvent } from "./event-store";
import { newId } from "./ids";
import { createSession, getSession, readEvents } from "./session-queries";
import { withTenant } from "./tenant-scope";

let testDb: TestDatabase;
let seeded: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 20 });
  seeded = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

async function newSession(): Promise<string> {
  const session = await createSession(testDb.db, {
    tenantId: seeded.tenantId,
    agentId: seeded.agentId,
    agentVersion: seeded.agentVersion,
    environmentId: null,
    parentSessionId: null,
    title: "test",
    metadata: { suite: "event-store" },
    budget: { max_total_tokens: null },
  });
  return session.id;
}

const userMessage = (text: string): NewEvent => ({ type: "user.message", content: [{ type: "text", text }] });
const modelStart: NewEvent = { type: "span.model_request_start", model: "fake-model" };

/** A mix that moves every part of the projection: input, pauses, answers, status and usage. */
function eventsFor(client: number, round: number): NewEvent[] {
  const toolUseId = newId("event");
  const batches: NewEvent[][] = [
    [userMessage(`c${client} r${round}`)],
    [{ type: "session.status_running" }, modelStart],
    [
      {
        id: toolUseId,
        type: "agent.tool_use",
        name: "bash",
        input: { cmd: "ls" },
        evaluated_permission: "ask",
      },
      { type: "user.tool_confirmation", tool_use_id: toolUseId, result: "allow" },
      { type: "agent.tool_result", tool_use_id: toolUseId, content: [], is_error: false },
    ],
    [
      {
        type: "session.usage",
        usage: {
          input_tokens: round,
          output_tokens: client,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
        budget: { max_total_tokens: null },
      },
      { type: "session.status_idle", stop_reason: { type: "end_turn" } },
    ],
  ];
  return batches[(client + round) % batches.length] ?? [];
}

/** The session's events, and the messages its outbox rows hold (one row per commit). */
async function countRows(sessionId: string): Promise<{ events: number; outbox: number }> {
  const events = await testDb.db
    .selectFrom("session_events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("session_id", "=", sessionId)
    .executeTakeFirstOrThrow();
  const outbox = await sql<{ n: number }>`
    SELECT coalesce(sum(jsonb_array_length(messages)), 0)::int AS n FROM outbox
    WHERE messages->0->>'session_id' = ${sessionId}`.execute(testDb.db);
  return { events: events.n, outbox: outbox.rows[0]?.n ?? 0 };
}

describe("append", () => {
  it("gives gapless seqs and returns the events exactly as they read back", async () => {
    const sessionId = await newSession();
    const now = new Date("2030-01-02T03:04:05.678Z");
    const first = await append(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      events: [userMessage("hello"), { type: "session.status_running", wake_id: "wake_x" }],
      now,
    });
    const second = await append(testDb.db, { tenantId: seeded.tenantId, sessionId, events: [modelStart] });

    expect(first.map((event) => event.seq)).toEqual([1, 2]);
    expect(second.map((event) => event.seq)).toEqual([3]);
    expect(first[0]).toMatchObject({
      type: "user.message",
      session_id: sessionId,
      created_at: now.toISOString(),
    });
    expect(first[1]?.wake_id).toBe("wake_x");
    const stored = await readEvents(testDb.db, { tenantId: seeded.tenantId, sessionId });
    // The first message was consumed by the model request that followed it.
    const consumed = { ...first[0], processed_at: second[0]?.created_at };
    expect(stored).toEqual([consumed, first[1], second[0]]);
    expect(JSON.stringify(stored[1])).toBe(JSON.stringify(first[1]));

    const session = await getSession(testDb.db, seeded.tenantId, sessionId);
    expect(session).toMatchObject({ last_seq: 3, status: "running", lease_epoch: 0 });
    expect(session?.state.unprocessed_message_ids).toEqual([]);
  });

  // 500 appends contending for one session's row: correctness, not speed, so a loaded machine gets time.
  it("keeps seqs gapless and the projection a pure fold under many concurrent writers", {
    timeout: 120_000,
  }, async () => {
    const sessionId = await newSession();
    const clients = 20;
    const rounds = 25;
    const appended = await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        const mine: SessionEvent[] = [];
        for (let round = 0; round < rounds; round++) {
          mine.push(
            ...(await append(testDb.db, {
              tenantId: seeded.tenantId,
              sessionId,
              events: eventsFor(client, round),
            })),
          );
        }
        return mine;
      }),
    );
    const appendedIds = appended.flat().map((event) => event.id);
    const stored = await readEvents(testDb.db, { tenantId: seeded.tenantId, sessionId, limit: 10_000 });

    expect(stored.map((event) => event.seq)).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1));
    expect(new Set(stored.map((event) => event.id)).size).toBe(stored.length);
    expect(stored.map((event) => event.id).sort()).toEqual([...appendedIds].sort());
    // Each client's own appends came back in increasing seq order.
    for (const mine of appended) {
      expect(mine.map((event) => event.seq)).toEqual(
        [...mine.map((event) => event.seq)].sort((a, b) => a - b),
      );
    }

    const session = await getSession(testDb.db, seeded.tenantId, sessionId);
    let replayed = initialSessionState({
      title: "test",
      metadata: { suite: "event-store" },
      budget: { max_total_tokens: null },
    });
    for (const event of stored) replayed = reduceSessionState(replayed, event);
    expect(session?.state).toEqual(replayed);
    expect(session?.last_seq).toBe(stored.length);
    // Byte for byte in Postgres' canonical jsonb text, not just structurally.
    const same = await sql<{ same: boolean }>`
      SELECT state::text = ${JSON.stringify(replayed)}::jsonb::text AS same FROM sessions WHERE id = ${sessionId}`.execute(
      testDb.db,
    );
    expect(same.rows[0]?.same).toBe(true);
    expect(await countRows(sessionId)).toEqual({ events: stored.length, outbox: stored.length });
  });

  it("refuses a stale fence and writes nothing", async () => {
    const sessionId = await newSession();
    await testDb.db.updateTable("sessions").set({ lease_epoch: 5 }).where("id", "=", sessionId).execute();
    await append(testDb.db, { tenantId: seeded.tenantId, sessionId, events: [userMessage("in")], fence: 5 });

    await expect(
      append(testDb.db, { tenantId: seeded.tenantId, sessionId, events: [userMessage("late")], fence: 4 }),
    ).rejects.toMatchObject({ code: "stale_fence", retryable: false });
    expect(await countRows(sessionId)).toEqual({ events: 1, outbox: 1 });
    expect((await getSession(testDb.db, seeded.tenantId, sessionId))?.last_seq).toBe(1);
  });

  it("is tenant-scoped and refuses a duplicate event id, writing nothing", async () => {
    const sessionId = await newSession();
    await expect(
      append(testDb.db, { tenantId: newId("tenant"), sessionId, events: [userMessage("x")] }),
    ).rejects.toMatchObject({ code: "session_not_found" });
    await expect(
      withTenant(testDb.db, newId("tenant"), (trx) =>
        append(trx, { tenantId: seeded.tenantId, sessionId, events: [userMessage("x")] }),
      ),
    ).rejects.toMatchObject({ code: "tenant_scope_mismatch" });

    const [committed] = await append(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      events: [userMessage("a")],
    });
    await expect(
      append(testDb.db, {
        tenantId: seeded.tenantId,
        sessionId,
        events: [userMessage("b"), { ...userMessage("c"), id: committed?.id }],
      }),
    ).rejects.toMatchObject({ code: "duplicate_event_id" });
    expect(await countRows(sessionId)).toEqual({ events: 1, outbox: 1 });
  });

  it("commits with the caller's other rows or not at all", async () => {
    const sessionId = await newSession();
    await expect(
      testDb.db.transaction().execute(async (trx) => {
        await append(trx, { tenantId: seeded.tenantId, sessionId, events: [userMessage("rolled back")] });
        throw new Error("caller failed after appending");
      }),
    ).rejects.toThrow("caller failed");
    expect(await countRows(sessionId)).toEqual({ events: 0, outbox: 0 });
  });
});

describe("heads", () => {
  it("appends from a known head in one call, and folds again onto a head that moved", async () => {
    const sessionId = await newSession();
    const tenantId = seeded.tenantId;
    const start = await getSession(testDb.db, tenantId, sessionId);
    if (start === null) throw new Error("no session");
    const head = { lastSeq: start.last_seq, state: start.state };
    const first = await appendAt(testDb.db, { tenantId, sessionId, head, events: [userMessage("a")] });
    expect(first.head.lastSeq).toBe(1);
    // Another writer moves the head; a writer still holding the old one folds onto the new head.
    await append(testDb.db, { tenantId, sessionId, events: [userMessage("b")] });
    const late = await appendAt(testDb.db, { tenantId, sessionId, head: first.head, events: [modelStart] });
    expect(late.events.map((event) => event.seq)).toEqual([3]);
    const stored = await getSession(testDb.db, tenantId, sessionId);
    expect(JSON.stringify(late.head.state)).toBe(JSON.stringify(stored?.state));
    expect(stored?.state.unprocessed_message_ids).toEqual([]);
    const replayed = (await readEvents(testDb.db, { tenantId, sessionId })).reduce(
      reduceSessionState,
      initialSessionState({
        title: "test",
        metadata: { suite: "event-store" },
        budget: { max_total_tokens: null },
      }),
    );
    expect(JSON.stringify(replayed)).toBe(JSON.stringify(stored?.state));
  });

  it("refuses, writing nothing, an append at a head that moved when the caller asks to check again", async () => {
    const sessionId = await newSession();
    const tenantId = seeded.tenantId;
    const start = await getSession(testDb.db, tenantId, sessionId);
    if (start === null) throw new Error("no session");
    const head = { lastSeq: start.last_seq, state: start.state };
    await append(testDb.db, { tenantId, sessionId, events: [userMessage("first")] });
    await expect(
      appendAt(testDb.db, {
        tenantId,
        sessionId,
        head,
        events: [userMessage("late")],
        onMovedHead: "refuse",
      }),
    ).rejects.toMatchObject({ code: "session_head_moved", retryable: true });
    expect((await readEvents(testDb.db, { tenantId, sessionId })).map((event) => event.seq)).toEqual([1]);
    // At the head it now reads, the same append goes through.
    const moved = await getSession(testDb.db, tenantId, sessionId);
    const appended = await appendAt(testDb.db, {
      tenantId,
      sessionId,
      head: { lastSeq: moved?.last_seq ?? 0, state: moved?.state ?? start.state },
      events: [userMessage("late")],
      onMovedHead: "refuse",
    });
    expect(appended.events.map((event) => event.seq)).toEqual([2]);
  });

  it("commits ledger rows and the wake's end with the events, or none of them", async () => {
    const sessionId = await newSession();
    const tenantId = seeded.tenantId;
    const wakeId = newId("wake");
    await testDb.db
      .insertInto("wakes")
      .values({
        id: wakeId,
        tenant_id: tenantId,
        session_id: sessionId,
        status: "running",
        reason: "user_message",
        attempt: 1,
        lease_epoch: 0,
        worker_id: "w",
        lease_expires_at: new Date(Date.now() + 60_000),
        started_at: new Date(),
        due_at: new Date(),
      })
      .execute();
    const callId = newId("event");
    const use: NewEvent = {
      id: callId,
      type: "agent.tool_use",
      name: "get_state",
      input: { key: "k" },
      evaluated_permission: "allow",
    };
    const result: NewEvent = { type: "agent.tool_result", tool_use_id: callId, content: [], is_error: false };
    const idle: NewEvent = { type: "session.status_idle", stop_reason: { type: "end_turn" } };
    const writes = {
      wakeId,
      batchPlan: { calls: [callId] },
      record: [
        {
          id: callId,
          name: "get_state",
          input: { key: "k" },
          idempotent: true,
          status: "succeeded" as const,
          result: { value: 1 },
        },
      ],
    };
    await expect(
      append(testDb.db, {
        tenantId,
        sessionId,
        events: [use, result, idle],
        fence: 7,
        toolCalls: writes,
        finishWake: { wakeId, epoch: 0, status: "completed" },
      }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    expect(
      await testDb.db.selectFrom("tool_calls").select("id").where("session_id", "=", sessionId).execute(),
    ).toEqual([]);

    await append(testDb.db, {
      tenantId,
      sessionId,
      events: [use, result, idle],
      fence: 0,
      toolCalls: writes,
      finishWake: { wakeId, epoch: 0, status: "completed" },
    });
    const call = await testDb.db
      .selectFrom("tool_calls")
      .selectAll()
      .where("id", "=", callId)
      .executeTakeFirstOrThrow();
    expect(call).toMatchObject({
      status: "succeeded",
      result: { value: 1 },
      wake_id: wakeId,
      idempotent: true,
    });
    const batch = await testDb.db
      .selectFrom("tool_batches")
      .select("plan")
      .where("id", "=", call.batch_id ?? "")
      .executeTakeFirstOrThrow();
    expect(batch.plan).toEqual({ calls: [callId] });
    const wake = await testDb.db
      .selectFrom("wakes")
      .select(["status", "finished_at"])
      .where("id", "=", wakeId)
      .executeTakeFirstOrThrow();
    expect(wake.status).toBe("completed");
    expect(wake.finished_at).not.toBeNull();

    await append(testDb.db, {
      tenantId,
      sessionId,
      events: [],
      toolCalls: { wakeId, settle: [{ id: callId, status: "failed", result: null }] },
    });
    expect(
      await testDb.db
        .selectFrom("tool_calls")
        .select("status")
        .where("id", "=", callId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: "failed" });
  });
});

describe("agent state", () => {
  const stateOf = (tenantId: string, prefix: string) =>
    testDb.db
      .selectFrom("agent_state")
      .select(["key", "value"])
      .where("tenant_id", "=", tenantId)
      .where("agent_id", "=", seeded.agentId)
      .where("key", "like", `${prefix}/%`)
      .orderBy("key")
      .execute();

  it("writes the session agent's state in the append's statement, only when the append passes", async () => {
    const sessionId = await newSession();
    const tenantId = seeded.tenantId;
    await testDb.db.updateTable("sessions").set({ lease_epoch: 3 }).where("id", "=", sessionId).execute();
    const start = await getSession(testDb.appDb, tenantId, sessionId);
    if (start === null) throw new Error("no session");
    const head = { lastSeq: start.last_seq, state: start.state };

    await expect(
      appendAt(testDb.appDb, {
        tenantId,
        sessionId,
        head,
        events: [userMessage("late")],
        fence: 2,
        agentState: [{ key: "step/a", value: "lost" }],
      }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    expect(await stateOf(tenantId, "step")).toEqual([]);
    expect(await countRows(sessionId)).toEqual({ events: 0, outbox: 0 });

    // Another writer moves the head: the state rides with the folded retry and lands once.
    await append(testDb.appDb, { tenantId, sessionId, events: [userMessage("b")], fence: 3 });
    const appended = await appendAt(testDb.appDb, {
      tenantId,
      sessionId,
      head,
      events: [userMessage("c")],
      fence: 3,
      agentState: [
        { key: "step/a", value: { n: 1 } },
        { key: "step/b", value: null },
        { key: "step/a", value: { n: 2 } },
      ],
    });
    expect(appended.events.map((event) => event.seq)).toEqual([2]);
    expect(await stateOf(tenantId, "step")).toEqual([
      { key: "step/a", value: { n: 2 } },
      { key: "step/b", value: null },
    ]);
    expect(await countRows(sessionId)).toEqual({ events: 2, outbox: 2 });
  });

  it("rolls back with the caller's transaction and refuses another tenant's", async () => {
    const sessionId = await newSession();
    const tenantId = seeded.tenantId;
    await expect(
      testDb.appDb.transaction().execute(async (trx) => {
        await append(trx, {
          tenantId,
          sessionId,
          events: [userMessage("rolled back")],
          agentState: [{ key: "gone/rolled", value: 1 }],
        });
        throw new Error("caller failed after appending");
      }),
    ).rejects.toThrow("caller failed");
    await expect(
      append(testDb.appDb, {
        tenantId: newId("tenant"),
        sessionId,
        events: [userMessage("x")],
        agentState: [{ key: "gone/other", value: 1 }],
      }),
    ).rejects.toMatchObject({ code: "session_not_found" });
    expect(await stateOf(tenantId, "gone")).toEqual([]);
    expect(await countRows(sessionId)).toEqual({ events: 0, outbox: 0 });
  });
});

describe("outbox", () => {
  it("holds one row per commit with its events in seq order, and notifies the relay", async () => {
    const sessionId = await newSession();
    const listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    const notified = new Promise<string>((resolve) =>
      listener.once("notification", (msg) => resolve(msg.channel)),
    );
    await listener.query("LISTEN wl_outbox");
    try {
      const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      const first = await append(testDb.db, {
        tenantId: seeded.tenantId,
        sessionId,
        events: [userMessage("hi"), { type: "agent.message", content: [{ type: "text", text: "yo" }] }],
        traceHeaders: { traceparent },
      });
      expect(await notified).toBe("wl_outbox");
      const second = await append(testDb.db, {
        tenantId: seeded.tenantId,
        sessionId,
        events: [userMessage("again")],
      });

      const rows = await testDb.db
        .selectFrom("outbox")
        .selectAll()
        .where(sql<string>`messages->0->>'session_id'`, "=", sessionId)
        .orderBy("id")
        .execute();
      // Each message is the event as read back, its id the message id the relay publishes it under.
      expect(rows.map((row) => row.messages)).toEqual([first, second]);
      expect(rows.map((row) => row.tenant_id)).toEqual([seeded.tenantId, seeded.tenantId]);
      expect(rows.map((row) => row.headers)).toEqual([{ traceparent }, {}]);
      expect(typeof rows[0]?.id).toBe("number");
    } finally {
      await listener.end();
    }
  });

  it("writes no row for a commit without events", async () => {
    const sessionId = await newSession();
    const outboxRows = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox`.execute(testDb.db)).rows[0]?.n;
    const before = await outboxRows();
    // Agent state alone still commits through wl_append.
    await append(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      events: [],
      agentState: [{ key: "step/only", value: 1 }],
    });
    expect(await outboxRows()).toBe(before);
  });
});

describe("processed_at", () => {
  it("stamps the user messages before a model request start with its created_at, and only those", async () => {
    const sessionId = await newSession();
    const tenantId = seeded.tenantId;
    const earlier = await append(testDb.db, {
      tenantId,
      sessionId,
      events: [userMessage("1"), userMessage("2")],
    });
    const startAt = new Date("2031-05-06T07:08:09.010Z");
    const batch = await append(testDb.db, {
      tenantId,
      sessionId,
      events: [userMessage("3"), modelStart, userMessage("4")],
      now: startAt,
    });
    expect(batch.map((event) => event.processed_at)).toEqual([startAt.toISOString(), null, null]);

    const stored = await readEvents(testDb.db, { tenantId, sessionId });
    expect(stored.map((event) => [event.seq, event.type, event.processed_at])).toEqual([
      [1, "user.message", startAt.toISOString()],
      [2, "user.message", startAt.toISOString()],
      [3, "user.message", startAt.toISOString()],
      [4, "span.model_request_start", null],
      [5, "user.message", null],
    ]);
    const session = await getSession(testDb.db, tenantId, sessionId);
    expect(session?.state.unprocessed_message_ids).toEqual([stored[4]?.id]);
    expect(earlier.every((event) => event.processed_at === null)).toBe(true);
  });
});
