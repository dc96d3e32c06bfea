import type { SessionEvent } from "@wakeloop/contracts";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTINUE_MESSAGE, childRunLeft, finishChildRun, startChildRuns } from "./child-runs";
import { append, type NewEvent } from "./event-store";
import { readEvents } from "./session-queries";
import { spawnChildSession } from "./sub-sessions";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 8 });
});
afterAll(() => testDb.drop());

/** A parent with one child whose first turn ended, and helpers to append to either. */
async function family(seeded: SeededAgent) {
  const { tenantId } = seeded;
  const parent = await seedSession(testDb.appDb, seeded);
  const child = await spawnChildSession(testDb.appDb, {
    tenantId,
    parent: { sessionId: parent.id, agentId: seeded.agentId, environmentId: null, depth: 0 },
    task: "look into it",
    title: null,
    metadata: {},
    terms: () => ({ budget: { max_total_tokens: 10_000 }, model: null }),
    maxChildren: 10,
  });
  const to = (sessionId: string, ...events: NewEvent[]) =>
    append(testDb.appDb, { tenantId, sessionId, events });
  await to(child.id, ...turn("first look"), {
    type: "session.status_idle",
    stop_reason: { type: "end_turn" },
  });
  /** The parent pauses on `session_run_child` with `input`; returns the call's id. */
  const runCall = async (input: Record<string, unknown>) => {
    const [use] = await to(parent.id, { type: "agent.custom_tool_use", name: "session_run_child", input });
    await to(parent.id, {
      type: "session.status_idle",
      stop_reason: { type: "requires_action", event_ids: [use?.id ?? ""] },
    });
    return use?.id ?? "";
  };
  const events = (sessionId: string) => readEvents(testDb.appDb, { tenantId, sessionId });
  return {
    parent: { tenantId, sessionId: parent.id },
    child: { tenantId, sessionId: child.id },
    to,
    runCall,
    events,
  };
}

/** One model request of the child: its start, an optional call, and its end. */
function turn(text: string, call = false): NewEvent[] {
  return [
    { type: "span.model_request_start", model: "fake-model" },
    { type: "agent.message", content: [{ type: "text", text }] },
    ...(call
      ? [
          {
            type: "agent.tool_use",
            name: "get_state",
            input: { key: "k" },
            evaluated_permission: "allow",
          } as const,
        ]
      : []),
  ];
}

const answers = (events: SessionEvent[]) =>
  events.flatMap((event) =>
    event.type === "user.custom_tool_result"
      ? [
          {
            id: event.custom_tool_use_id,
            isError: event.is_error,
            text: event.content.map((b) => ("text" in b ? b.text : "")).join(""),
          },
        ]
      : [],
  );

describe("session_run_child runs in Postgres", () => {
  it("starts a run once with its message, bounds it, and answers the parent once with the child's summary", async () => {
    const f = await family(await seedAgent(testDb.db));
    const callId = await f.runCall({ session_id: f.child.sessionId, message: "dig deeper", max_cycles: 2 });
    const started = await Promise.all(
      Array.from({ length: 4 }, () => startChildRuns(testDb.appDb, f.parent)),
    );
    expect(started).toEqual([0, 0, 0, 0]);
    const messages = (await f.events(f.child.sessionId)).filter((event) => event.type === "user.message");
    expect(messages).toHaveLength(2);
    expect(JSON.stringify(messages[1])).toContain("dig deeper");
    expect(await childRunLeft(testDb.appDb, f.child)).toBe(2);
    // Still going: one request used, the child is running.
    await f.to(f.child.sessionId, { type: "session.status_running" }, ...turn("step one", true));
    expect(await childRunLeft(testDb.appDb, f.child)).toBe(1);
    expect(await finishChildRun(testDb.appDb, f.child)).toBeNull();
    await f.to(f.child.sessionId, ...turn("step two", true), {
      type: "session.status_idle",
      stop_reason: { type: "end_turn" },
    });
    const finished = await Promise.all(
      Array.from({ length: 4 }, () => finishChildRun(testDb.appDb, f.child)),
    );
    expect(finished.filter((status) => status !== null)).toEqual(["out_of_cycles"]);
    const [answer] = answers(await f.events(f.parent.sessionId));
    expect(answer).toMatchObject({ id: callId, isError: false });
    expect(JSON.parse(answer?.text ?? "")).toMatchObject({
      session_id: f.child.sessionId,
      relation_to_current: "child",
      status: "out_of_cycles",
      cycles_used: 2,
      max_cycles: 2,
      result: "step two",
      child_count: 0,
      requires_action: null,
      outcome_status: "no_outcome",
      promotion_ready: false,
    });
    expect(answers(await f.events(f.parent.sessionId))).toHaveLength(1);
    // The run is over: the child is bounded no more.
    expect(await childRunLeft(testDb.appDb, f.child)).toBeNull();
  });

  it("tells an idle child with nothing to do to continue, and ends idle when its turn ends", async () => {
    const f = await family(await seedAgent(testDb.db));
    await f.runCall({ session_id: f.child.sessionId });
    await startChildRuns(testDb.appDb, f.parent);
    const last = (await f.events(f.child.sessionId)).at(-1);
    expect(last).toMatchObject({ type: "user.message", content: [{ type: "text", text: CONTINUE_MESSAGE }] });
    await f.to(f.child.sessionId, ...turn("all done"), {
      type: "session.status_idle",
      stop_reason: { type: "end_turn" },
    });
    expect(await finishChildRun(testDb.appDb, f.child)).toBe("idle");
    const [answer] = answers(await f.events(f.parent.sessionId));
    expect(JSON.parse(answer?.text ?? "")).toMatchObject({
      status: "idle",
      cycles_used: 1,
      max_cycles: 3,
      result: "all done",
    });
  });

  it("refuses a session that is not a direct child, and a finished child, writing nothing to them", async () => {
    const seeded = await seedAgent(testDb.db);
    const f = await family(seeded);
    const stranger = await seedSession(testDb.appDb, seeded);
    const strangerCall = await f.runCall({ session_id: stranger.id, message: "hi" });
    await f.to(f.child.sessionId, { type: "session.status_terminated", reason: "completed" });
    const before = (await f.events(f.child.sessionId)).length;
    const finishedCall = await f.runCall({ session_id: f.child.sessionId, message: "more" });
    expect(await startChildRuns(testDb.appDb, f.parent)).toBe(2);
    expect(answers(await f.events(f.parent.sessionId))).toEqual([
      { id: strangerCall, isError: true, text: `${stranger.id} is not a sub-session of this session` },
      { id: finishedCall, isError: true, text: expect.stringContaining("has finished (completed)") },
    ]);
    expect(await f.events(stranger.id)).toEqual([]);
    expect(await f.events(f.child.sessionId)).toHaveLength(before);
    expect(await childRunLeft(testDb.appDb, f.child)).toBeNull();
  });

  it("answers at once, writing nothing to it, for a child that waits on a person", async () => {
    const f = await family(await seedAgent(testDb.db));
    const [ask] = await f.to(f.child.sessionId, {
      type: "agent.tool_use",
      name: "deploy",
      input: {},
      evaluated_permission: "ask",
    });
    await f.to(f.child.sessionId, {
      type: "session.status_idle",
      stop_reason: { type: "requires_action", event_ids: [ask?.id ?? ""] },
    });
    const before = (await f.events(f.child.sessionId)).length;
    const callId = await f.runCall({ session_id: f.child.sessionId, message: "go on" });
    expect(await startChildRuns(testDb.appDb, f.parent)).toBe(1);
    const [answer] = answers(await f.events(f.parent.sessionId));
    expect(answer).toMatchObject({ id: callId, isError: false });
    expect(JSON.parse(answer?.text ?? "")).toMatchObject({
      status: "requires_action",
      cycles_used: 0,
      requires_action: { pending_action_kind: "tool_confirmation", pending_action_tool_name: "deploy" },
    });
    expect(await f.events(f.child.sessionId)).toHaveLength(before);
    expect(await childRunLeft(testDb.appDb, f.child)).toBeNull();
  });

  it("an interrupted parent's run is abandoned unanswered once the child stops", async () => {
    const f = await family(await seedAgent(testDb.db));
    await f.runCall({ session_id: f.child.sessionId, message: "slow work" });
    await startChildRuns(testDb.appDb, f.parent);
    // The interrupt clears the parent's pending call (its own error result comes from the parent's wake).
    await f.to(
      f.parent.sessionId,
      { type: "user.interrupt" },
      { type: "session.status_idle", stop_reason: { type: "end_turn" } },
    );
    await f.to(
      f.child.sessionId,
      { type: "user.interrupt" },
      { type: "session.status_idle", stop_reason: { type: "end_turn" } },
    );
    expect(await finishChildRun(testDb.appDb, f.child)).toBe("abandoned");
    expect(answers(await f.events(f.parent.sessionId))).toEqual([]);
    expect(await childRunLeft(testDb.appDb, f.child)).toBeNull();
  });
});
