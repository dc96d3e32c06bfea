import type { SessionEvent } from "@wakeloop/contracts";
import { initialSessionState, reduceSessionState } from "@wakeloop/session-core";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append, appendInTx, type NewEvent } from "./event-store";
import { newId } from "./ids";
import { createSession, getSession, readEvents } from "./session-queries";

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

async function countRows(sessionId: string): Promise<{ events: number; outbox: number }> {
  const events = await testDb.db
    .selectFrom("session_events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("session_id", "=", sessionId)
    .executeTakeFirstOrThrow();
  const outbox = await testDb.db
    .selectFrom("outbox")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("topic", "like", `evt.${seeded.tenantId}.${sessionId}.%`)
    .executeTakeFirstOrThrow();
  return { events: events.n, outbox: outbox.n };
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

  it("keeps seqs gapless and the projection a pure fold under many concurrent writers", async () => {
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

  it("is tenant-scoped, validates payloads and refuses a duplicate event id, writing nothing", async () => {
    const sessionId = await newSession();
    await expect(
      append(testDb.db, { tenantId: newId("tenant"), sessionId, events: [userMessage("x")] }),
    ).rejects.toMatchObject({ code: "session_not_found" });
    const invalid = { type: "user.message", content: [] } as unknown as NewEvent;
    await expect(
      append(testDb.db, { tenantId: seeded.tenantId, sessionId, events: [userMessage("ok"), invalid] }),
    ).rejects.toMatchObject({ code: "invalid_event" });
    await expect(
      append(testDb.db, {
        tenantId: seeded.tenantId,
        sessionId,
        events: [{ ...modelStart, trace_id: "nope" }],
      }),
    ).rejects.toMatchObject({ code: "invalid_event" });

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
        await appendInTx(trx, { tenantId: seeded.tenantId, sessionId, events: [userMessage("rolled back")] });
        throw new Error("caller failed after appending");
      }),
    ).rejects.toThrow("caller failed");
    expect(await countRows(sessionId)).toEqual({ events: 0, outbox: 0 });
  });
});

describe("outbox", () => {
  it("holds one row per event with the event id as msg id, and notifies the relay", async () => {
    const sessionId = await newSession();
    const listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    const notified = new Promise<string>((resolve) =>
      listener.once("notification", (msg) => resolve(msg.channel)),
    );
    await listener.query("LISTEN wl_outbox");
    try {
      const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      const events = await append(testDb.db, {
        tenantId: seeded.tenantId,
        sessionId,
        events: [userMessage("hi"), { type: "agent.message", content: [{ type: "text", text: "yo" }] }],
        traceHeaders: { traceparent },
      });
      expect(await notified).toBe("wl_outbox");

      const rows = await testDb.db
        .selectFrom("outbox")
        .selectAll()
        .where("topic", "like", `evt.${seeded.tenantId}.${sessionId}.%`)
        .orderBy("id")
        .execute();
      expect(rows.map((row) => row.msg_id)).toEqual(events.map((event) => event.id));
      expect(rows.map((row) => row.topic)).toEqual([
        `evt.${seeded.tenantId}.${sessionId}.user.message`,
        `evt.${seeded.tenantId}.${sessionId}.agent.message`,
      ]);
      expect(rows.map((row) => row.body)).toEqual(events);
      expect(rows[0]?.headers).toEqual({ traceparent });
      expect(typeof rows[0]?.id).toBe("number");
    } finally {
      await listener.end();
    }
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
