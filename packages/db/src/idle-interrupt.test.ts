import { INTERRUPTED_BEFORE_RUN } from "@wakeloop/session-core";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append, type NewEvent } from "./event-store";
import { settleIdleInterrupt } from "./idle-interrupt";
import { getSession, readEvents } from "./session-queries";
import { openWake } from "./wakes";

// Settles through the app role that row-level security binds, as the orchestrator does.

let testDb: TestDatabase;
let seeded: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase();
  seeded = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

const text = (t: string) => [{ type: "text" as const, text: t }];

async function sessionWith(
  events: (sessionId: string) => NewEvent[],
): Promise<{ tenantId: string; sessionId: string }> {
  const session = await seedSession(testDb.db, seeded);
  const target = { tenantId: seeded.tenantId, sessionId: session.id };
  await append(testDb.db, { ...target, events: events(session.id) });
  return target;
}

/** Idle on two calls that wait for approval, one of them approved but not run yet. */
function waiting(sessionId: string): NewEvent[] {
  // Event ids are unique per database, so each session names its calls apart.
  const [first, second] = [`evt_call_1_${sessionId}`, `evt_call_2_${sessionId}`];
  return [
    { id: first, type: "agent.tool_use", name: "deploy", input: {}, evaluated_permission: "ask" },
    { id: second, type: "agent.tool_use", name: "shell_run", input: {}, evaluated_permission: "ask" },
    { type: "session.status_idle", stop_reason: { type: "requires_action", event_ids: [first, second] } },
    { type: "user.tool_confirmation", tool_use_id: first, result: "allow" },
  ];
}

const waitingSession = () => sessionWith(waiting);

describe("settleIdleInterrupt", () => {
  it("gives every call that has not run an error result and ends the turn, once", async () => {
    const target = await waitingSession();
    await append(testDb.db, { ...target, events: [{ type: "user.interrupt" }] });

    expect(await settleIdleInterrupt(testDb.appDb, target)).toBe(true);
    const settled = await readEvents(testDb.db, { ...target, afterSeq: 5 });
    expect(settled).toMatchObject([
      { type: "agent.tool_result", is_error: true, content: text(INTERRUPTED_BEFORE_RUN) },
      { type: "agent.tool_result", is_error: true, content: text(INTERRUPTED_BEFORE_RUN) },
      { type: "session.status_idle", stop_reason: { type: "end_turn" } },
    ]);
    const ids = settled.flatMap((event) => (event.type === "agent.tool_result" ? [event.tool_use_id] : []));
    expect(ids.sort()).toEqual([`evt_call_1_${target.sessionId}`, `evt_call_2_${target.sessionId}`]);
    expect(await getSession(testDb.db, target.tenantId, target.sessionId)).toMatchObject({
      status: "idle",
      state: { interrupt_requested: false, interrupted_call_ids: [], pending_actions: [] },
    });
    // A repeated delivery of the interrupt finds nothing left to settle.
    expect(await settleIdleInterrupt(testDb.appDb, target)).toBe(false);
    expect((await getSession(testDb.db, target.tenantId, target.sessionId))?.last_seq).toBe(8);
  });

  it("answers an MCP call waiting for approval with an agent.mcp_tool_result", async () => {
    const target = await sessionWith((sessionId) => {
      const call = `evt_mcp_${sessionId}`;
      return [
        {
          id: call,
          type: "agent.mcp_tool_use",
          name: "mcp__crm__find",
          mcp_server_name: "crm",
          input: {},
          evaluated_permission: "ask",
        },
        { type: "session.status_idle", stop_reason: { type: "requires_action", event_ids: [call] } },
      ];
    });
    await append(testDb.db, { ...target, events: [{ type: "user.interrupt" }] });
    expect(await settleIdleInterrupt(testDb.appDb, target)).toBe(true);
    const settled = await readEvents(testDb.db, { ...target, afterSeq: 3 });
    expect(settled).toMatchObject([
      { type: "agent.mcp_tool_result", mcp_tool_use_id: `evt_mcp_${target.sessionId}`, is_error: true },
      { type: "session.status_idle", stop_reason: { type: "end_turn" } },
    ]);
  });

  it("leaves a session whose wake is open to the worker that holds it", async () => {
    const target = await waitingSession();
    await append(testDb.db, { ...target, events: [{ type: "user.interrupt" }] });
    expect(await openWake(testDb.db, { ...target, reason: "user_message" })).not.toBeNull();

    expect(await settleIdleInterrupt(testDb.appDb, target)).toBe(false);
    expect((await getSession(testDb.db, target.tenantId, target.sessionId))?.last_seq).toBe(5);
  });

  it("answers a session with nothing to settle without waiting for its row lock", async () => {
    // The gateway appending the client's next message holds the row right after a turn's idle.
    const target = await waitingSession();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = testDb.db.transaction().execute(async (trx) => {
      await trx.selectFrom("sessions").select("id").where("id", "=", target.sessionId).forUpdate().execute();
      locked();
      await held;
    });
    await lockTaken;
    const answer = await Promise.race([
      settleIdleInterrupt(testDb.appDb, target),
      new Promise((resolve) => setTimeout(() => resolve("blocked"), 2_000)),
    ]);
    release();
    await holder;
    expect(answer).toBe(false);
  });

  it("appends nothing without an interrupt, or for a running or unknown session", async () => {
    const waiting = await waitingSession();
    expect(await settleIdleInterrupt(testDb.appDb, waiting)).toBe(false);

    const running = await sessionWith(() => [
      { type: "user.message", content: text("hi") },
      { type: "session.status_running" },
      { type: "user.interrupt" },
    ]);
    expect(await settleIdleInterrupt(testDb.appDb, running)).toBe(false);
    expect((await getSession(testDb.db, running.tenantId, running.sessionId))?.last_seq).toBe(3);

    expect(await settleIdleInterrupt(testDb.appDb, { ...waiting, sessionId: "sesn_unknown" })).toBe(false);
    expect((await getSession(testDb.db, waiting.tenantId, waiting.sessionId))?.last_seq).toBe(4);
  });
});
