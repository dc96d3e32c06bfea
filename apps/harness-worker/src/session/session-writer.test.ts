import { append, newId, readEvents, setAgentState } from "@wakeloop/db";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedLease,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSession, sessionSpecs } from "./load-session";
import { SessionWriter } from "./session-writer";

let testDb: TestDatabase;
let seeded: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 10 });
  seeded = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

/** A session with a wake this test holds, and the writer a worker would use for it. */
async function heldWake() {
  const { sessionId, wakeId, lease } = await seedLease(testDb, seeded);
  const view = await loadSession(testDb.appDb, lease, sessionSpecs(lease));
  const writer = new SessionWriter(testDb.appDb, view, { id: wakeId, epoch: lease.epoch, traceId: null });
  return { sessionId, wakeId, view, writer };
}

const say = (text: string) => ({ type: "user.message" as const, content: [{ type: "text" as const, text }] });
const thinking = { type: "agent.thinking" as const };

describe("SessionWriter", () => {
  it("commits buffered results first with the next write, stamped with the wake, and moves the view", async () => {
    const { sessionId, wakeId, view, writer } = await heldWake();
    writer.buffer({ events: [thinking] });
    const committed = await writer.write({ events: [{ type: "span.model_request_start", model: "m" }] });
    expect(committed.map((event) => [event.seq, event.type, event.wake_id])).toEqual([
      [1, "agent.thinking", wakeId],
      [2, "span.model_request_start", wakeId],
    ]);
    expect(view.lastSeq).toBe(2);
    expect(
      (await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId })).map((e) => e.id),
    ).toEqual(committed.map((event) => event.id));
  });

  it("folds onto events others committed in between, and the view reads them in order", async () => {
    const { sessionId, view, writer } = await heldWake();
    await writer.write({ events: [thinking] });
    const [message] = await append(testDb.appDb, {
      tenantId: seeded.tenantId,
      sessionId,
      events: [say("hi")],
    });
    const committed = await writer.write({ events: [{ type: "span.model_request_start", model: "m" }] });
    expect(committed.map((event) => event.seq)).toEqual([3]);
    expect(view.events.map((event) => event.id)).toEqual(
      (await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId })).map((event) => event.id),
    );
    // The request start consumed the message that arrived before it.
    expect(view.state.unprocessed_message_ids).not.toContain(message?.id);
  });

  it("commits work done in its transaction with the events, or neither when the lease was lost", async () => {
    const { sessionId, writer } = await heldWake();
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const key = newId("event");
    await writer.writeWith(async (db) => {
      await setAgentState(db, scope, key, "kept");
      return { events: [thinking] };
    });
    expect(await stateValue(key)).toBe("kept");

    // The sweeper re-queued the wake: the epoch moved on, so the next commit is fenced out whole.
    await loseLease(sessionId);
    await expect(
      writer.writeWith(async (db) => {
        await setAgentState(db, scope, key, "lost");
        return { events: [thinking] };
      }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    expect(await stateValue(key)).toBe("kept");
  });

  it("commits the agent's state writes in the append, in order, or none when the lease was lost", async () => {
    const { sessionId, view, writer } = await heldWake();
    const [kept, other] = [newId("event"), newId("event")];
    await writer.write({
      events: [thinking],
      agentState: [
        { key: kept, value: "first" },
        { key: other, value: { n: 1 } },
        { key: kept, value: "kept" },
      ],
    });
    expect([await stateValue(kept), await stateValue(other)]).toEqual(["kept", { n: 1 }]);
    expect(view.lastSeq).toBe(1);

    await loseLease(sessionId);
    await expect(
      writer.write({ events: [thinking], agentState: [{ key: kept, value: "lost" }] }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    expect(await stateValue(kept)).toBe("kept");
    expect(await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId })).toHaveLength(1);
  });

  it("records, settles and finishes with its events", async () => {
    const { wakeId, writer } = await heldWake();
    const call = { id: newId("event"), name: "bash", input: { command: "ls" }, idempotent: false };
    await writer.write({
      events: [{ ...call, type: "agent.tool_use", evaluated_permission: "allow" }],
      record: [{ ...call, status: "planned" }],
      batchPlan: { calls: [call.id] },
    });
    await writer.markRunning(call.id);
    expect(await callStatus(call.id)).toBe("running");
    writer.buffer({
      events: [{ type: "agent.tool_result", tool_use_id: call.id, content: [], is_error: false }],
      settle: [{ id: call.id, status: "succeeded", result: { exit: 0 } }],
    });
    await writer.write({
      events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
      finish: "completed",
    });
    expect(await callStatus(call.id)).toBe("succeeded");
    const wake = await testDb.db
      .selectFrom("wakes")
      .select("status")
      .where("id", "=", wakeId)
      .executeTakeFirstOrThrow();
    expect(wake.status).toBe("completed");
  });
});

/** What the sweeper's re-queue does to a held lease: the epoch moves on. */
async function loseLease(sessionId: string): Promise<void> {
  await testDb.db
    .updateTable("sessions")
    .set((eb) => ({ lease_epoch: eb("lease_epoch", "+", 1) }))
    .where("id", "=", sessionId)
    .execute();
}

async function stateValue(key: string): Promise<unknown> {
  const row = await testDb.db
    .selectFrom("agent_state")
    .select("value")
    .where("key", "=", key)
    .executeTakeFirst();
  return row?.value;
}

async function callStatus(id: string): Promise<string | undefined> {
  const row = await testDb.db
    .selectFrom("tool_calls")
    .select("status")
    .where("id", "=", id)
    .executeTakeFirst();
  return row?.status;
}
