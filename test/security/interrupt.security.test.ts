import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8 point 5: a call the user allowed but that has not run yet must not run once the user
// interrupts. One worker with one slot, so a second session's slow model call can hold the only slot
// while the allow and the interrupt land: the order is forced by the platform, not by timing.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1, workerEnv: { WORKER_SLOTS: "1" } });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function post(path: string, body: unknown) {
  const response = await platform.request("POST", path, body);
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
  return response.body;
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });

/** An agent whose `set_state` asks first, and a session of it waiting on one such call. */
async function sessionAwaitingAllow(key: string) {
  const agent = await post("/v1/agents", {
    name: "interrupt",
    model: platform.fakeModel(),
    tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] }],
  });
  const session = await post("/v1/sessions", { agent: agent.id });
  platform.fake.enqueue({ toolCalls: [{ name: "set_state", input: { key, value: "ran" } }] });
  await post(`/v1/sessions/${session.id}/events`, { events: [say("store it")] });
  await platform.waitForIdle(session.id, "requires_action");
  const toolUse = (await platform.events(session.id)).find((event) => event.type === "agent.tool_use");
  expect(toolUse).toMatchObject({ name: "set_state", evaluated_permission: "ask" });
  return { agentId: agent.id as string, sessionId: session.id as string, toolUseId: toolUse?.id as string };
}

/**
 * After the interrupted turn, one more user turn: it runs after every wake the answer could have
 * caused, so the call's effect is checked once nothing can still run it.
 */
async function expectNeverRan(target: { agentId: string; sessionId: string; toolUseId: string }) {
  const interruptSeq = (await platform.events(target.sessionId)).find(
    (e) => e.type === "user.interrupt",
  )?.seq;
  await platform.waitForIdle(target.sessionId, "end_turn", interruptSeq);
  const before = platform.fake.requests.length;
  const posted = await post(`/v1/sessions/${target.sessionId}/events`, { events: [say("what happened?")] });
  await platform.waitForIdle(target.sessionId, "end_turn", posted.events[0].seq);

  expect(
    await platform.db.selectFrom("agent_state").selectAll().where("agent_id", "=", target.agentId).execute(),
  ).toEqual([]);
  const events = await platform.events(target.sessionId);
  const results = events.filter(
    (event): event is Extract<SessionEvent, { type: "agent.tool_result" }> =>
      event.type === "agent.tool_result" && event.tool_use_id === target.toolUseId,
  );
  expect(results).toHaveLength(1);
  expect(results[0]).toMatchObject({ is_error: true });
  expect(JSON.stringify(results[0]?.content)).toContain("interrupted");
  // The model's next request carries that error result, and no model request saw the call succeed.
  const seen = platform.fake.requests.slice(before).flatMap((request) => request.view?.toolResults ?? []);
  expect(seen).toContainEqual(expect.objectContaining({ name: "set_state", isError: true }));
  const ledger = await platform.db
    .selectFrom("tool_calls")
    .select("status")
    .where("id", "=", target.toolUseId)
    .execute();
  expect(ledger.map((row) => row.status)).not.toContain("succeeded");
}

describe("allow then interrupt (issue #8 point 5)", () => {
  it("does not run a call allowed and interrupted in one request", { timeout: 90_000 }, async () => {
    const target = await sessionAwaitingAllow("one-request");
    await post(`/v1/sessions/${target.sessionId}/events`, {
      events: [
        { type: "user.tool_confirmation", tool_use_id: target.toolUseId, result: "allow" },
        { type: "user.interrupt" },
      ],
    });
    await expectNeverRan(target);
  });

  it("does not run a call allowed, then interrupted before a worker picked its wake up", {
    timeout: 90_000,
  }, async () => {
    const target = await sessionAwaitingAllow("two-requests");
    // Another session's slow model call holds the only worker slot.
    const blockerAgent = await post("/v1/agents", { name: "blocker", model: platform.fakeModel() });
    const blocker = await post("/v1/sessions", { agent: blockerAgent.id });
    platform.fake.enqueue({ text: "slow", delayMs: 120_000 });
    await post(`/v1/sessions/${blocker.id}/events`, { events: [say("take your time")] });
    await platform.waitForEvent(blocker.id, (event) => event.type === "span.model_request_start");

    await post(`/v1/sessions/${target.sessionId}/events`, {
      events: [{ type: "user.tool_confirmation", tool_use_id: target.toolUseId, result: "allow" }],
    });
    await post(`/v1/sessions/${target.sessionId}/events`, { events: [{ type: "user.interrupt" }] });
    // Free the slot: the target's wake now runs with both answers committed.
    await post(`/v1/sessions/${blocker.id}/events`, { events: [{ type: "user.interrupt" }] });
    await expectNeverRan(target);
  });
});
