import type { SessionEvent } from "@wakeloop/contracts";
import type { FakeRequestView, Turn } from "@wakeloop/fake-model";
import { DELEGATING_USAGE, delegatingTurn, Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #11 sub-sessions through the running services: a parent spawns three children in parallel,
// waits for them, gets their results and finishes; interrupting a parent stops its children and
// archiving it ends them; children's budgets are carved from the parent's and charged back; a child
// can run another model of its agent's provider.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 2 });
  platform.fake.setScript({ defaultTurn: delegatingTurn });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function agent(): Promise<string> {
  const created = await platform.request("POST", "/v1/agents", {
    name: "delegator",
    model: platform.fakeModel(),
    system: "You delegate.",
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

const tokens = (usage: { input_tokens: number; output_tokens: number }) =>
  usage.input_tokens + usage.output_tokens;

async function delegate(budget: number | null, text: string): Promise<string> {
  const created = await platform.request("POST", "/v1/sessions", {
    agent: await agent(),
    ...(budget !== null && { budget: { max_total_tokens: budget } }),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const parent = created.body.id as string;
  const sent = await platform.request("POST", `/v1/sessions/${parent}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return parent;
}

function waitAnswer(events: SessionEvent[]) {
  const [answer] = events.filter((event) => event.type === "user.custom_tool_result");
  if (answer?.type !== "user.custom_tool_result") throw new Error("the wait was not answered");
  const text = answer.content.map((block) => ("text" in block ? block.text : "")).join("");
  return JSON.parse(text) as { results: Array<{ id: string; status: string; result: string | null }> };
}

function ofType<T extends SessionEvent["type"]>(events: SessionEvent[], type: T) {
  return events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);
}

describe("sub-sessions", () => {
  it("a parent spawns three children in parallel, waits, gets their results and finishes", async () => {
    const agentId = await agent();
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId });
    const parent = created.body.id as string;
    const sent = await platform.request("POST", `/v1/sessions/${parent}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "delegate: a, b, c" }] }],
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await platform.waitForIdle(parent, "end_turn", 0, 60_000);
    const events = await platform.events(parent);

    const children = ofType(events, "session.child_created").map((event) => event.child_session_id);
    expect(children).toHaveLength(3);
    // Each child is a real session of the tenant under this parent, one level down, that ended completed.
    for (const [index, child] of children.entries()) {
      const row = await platform.request("GET", `/v1/sessions/${child}`);
      expect(row.body).toMatchObject({ parent_session_id: parent, status: "terminated" });
      const own = await platform.events(child);
      expect(own.map((event) => event.type)).toContain("session.status_terminated");
      // The child's first wake runs in the trace of the parent's wake that spawned it.
      const spawnedIn = events.find(
        (event) => event.type === "session.child_created" && event.child_session_id === child,
      );
      expect(spawnedIn?.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(own.find((event) => event.type === "session.status_running")?.trace_id).toBe(
        spawnedIn?.trace_id,
      );
      expect(ofType(own, "user.message")[0]?.content).toEqual([
        { type: "text", text: `child: ${["a", "b", "c"][index]}` },
      ]);
    }

    // The parent heard of each child once, and its wait was answered once, with every result.
    const completed = ofType(events, "session.child_completed");
    expect(completed.map((event) => event.child_session_id).sort()).toEqual([...children].sort());
    expect(completed.every((event) => event.status === "completed")).toBe(true);
    const answers = ofType(events, "user.custom_tool_result");
    expect(answers).toHaveLength(1);
    const answer = JSON.parse(
      answers[0]?.content.map((block) => ("text" in block ? block.text : "")).join("") ?? "",
    ) as { results: Array<{ id: string; status: string; result: string }> };
    expect(answer.results).toEqual(
      children.map((id, index) => ({ id, status: "completed", result: `done ${["a", "b", "c"][index]}` })),
    );
    const final = ofType(events, "agent.message").at(-1);
    expect(JSON.stringify(final?.content)).toContain("done a");
  }, 120_000);

  it("interrupting the parent stops its running children; archiving it ends them", async () => {
    const agentId = await agent();
    const created = await platform.request("POST", "/v1/sessions", { agent: agentId });
    const parent = created.body.id as string;
    await platform.request("POST", `/v1/sessions/${parent}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "delegate: slow 1, slow 2" }] }],
    });
    await platform.waitForIdle(parent, "requires_action", 0, 60_000);
    const children = ofType(await platform.events(parent), "session.child_created").map(
      (event) => event.child_session_id,
    );
    expect(children).toHaveLength(2);
    for (const child of children) {
      await platform.waitForEvent(child, (event) => event.type === "span.model_request_start", 30_000);
    }

    const interrupted = await platform.request("POST", `/v1/sessions/${parent}/events`, {
      events: [{ type: "user.interrupt" }],
    });
    expect(interrupted.status, JSON.stringify(interrupted.body)).toBe(202);
    // Each child is interrupted in its model call (well before the fake's 20 s) and ends its turn.
    for (const child of children) {
      const stopped = await platform.waitForEvent(
        child,
        (event, all) =>
          event.type === "session.status_idle" &&
          all.some((other) => other.type === "user.interrupt" && other.seq < event.seq),
        15_000,
      );
      expect(stopped).toMatchObject({ stop_reason: { type: "end_turn" } });
      expect((await platform.events(child)).some((event) => event.type === "agent.message")).toBe(false);
    }
    // The parent's wait ended with the interrupt: an error result, nothing left pending.
    const parentEvents = await platform.events(parent);
    const wait = ofType(parentEvents, "agent.custom_tool_use").find((e) => e.name === "wait_for_sessions");
    expect(wait).toBeDefined();

    const archived = await platform.request("POST", `/v1/sessions/${parent}/archive`);
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    for (const child of children) {
      await platform.waitForEvent(
        child,
        (event) => event.type === "session.status_terminated" && event.reason === "archived",
        15_000,
      );
    }
    // Each archived child told its parent once.
    await platform.waitForEvent(
      parent,
      (_, all) => ofType(all, "session.child_completed").length === children.length,
      15_000,
    );
    const told = ofType(await platform.events(parent), "session.child_completed");
    expect(told.map((event) => event.status)).toEqual(["archived", "archived"]);
  }, 120_000);

  it("a child's approval surfaces on the parent's pending and is answered from the parent", async () => {
    const created = await platform.request("POST", "/v1/agents", {
      name: "careful delegator",
      model: platform.fakeModel(),
      tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const session = await platform.request("POST", "/v1/sessions", { agent: created.body.id });
    const parent = session.body.id as string;
    await platform.request("POST", `/v1/sessions/${parent}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "delegate: ask answer_key" }] }],
    });
    await platform.waitForIdle(parent, "requires_action", 0, 60_000);
    const [child] = ofType(await platform.events(parent), "session.child_created").map(
      (event) => event.child_session_id,
    );
    const asked = await platform.waitForIdle(child ?? "", "requires_action", 0, 30_000);
    const askedIds =
      asked.type === "session.status_idle" && asked.stop_reason.type === "requires_action"
        ? asked.stop_reason.event_ids
        : [];
    expect(askedIds).toHaveLength(1);

    // The parent's stream shows that its child waits on a person, once.
    await platform.waitForEvent(parent, (event) => event.type === "session.child_requires_action", 15_000);
    expect(ofType(await platform.events(parent), "session.child_requires_action")).toMatchObject([
      { child_session_id: child, idle_event_id: asked.id, event_ids: askedIds },
    ]);

    // The parent's pending lists its own wait and the child's approval, marked with the child's id.
    const pending = await platform.request("GET", `/v1/sessions/${parent}/pending`);
    const approval = (
      pending.body.data as Array<{ event_id: string; name: string; session_id?: string }>
    ).find((action) => action.session_id === child);
    expect(approval).toMatchObject({ event_id: askedIds[0], name: "set_state", kind: "tool_confirmation" });
    // Nothing ran before the allow (invariant 4).
    expect(ofType(await platform.events(child ?? ""), "agent.tool_result")).toHaveLength(0);

    const answered = await platform.request("POST", `/v1/sessions/${parent}/events`, {
      events: [{ type: "user.tool_confirmation", tool_use_id: askedIds[0], result: "allow" }],
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(202);
    expect(answered.body.events[0]).toMatchObject({ session_id: child, type: "user.tool_confirmation" });

    // The child runs the call, reports, and the parent finishes with its result.
    await platform.waitForIdle(parent, "end_turn", 0, 60_000);
    const childEvents = await platform.events(child ?? "");
    expect(ofType(childEvents, "agent.tool_result")[0]).toMatchObject({
      tool_use_id: askedIds[0],
      is_error: false,
    });
    const told = ofType(await platform.events(parent), "session.child_completed");
    expect(told).toMatchObject([{ child_session_id: child, status: "completed" }]);
    expect(told[0]?.result).toContain("stored");

    // An answer that names no call of the parent or its sub-sessions is still refused, and writes nothing.
    const stray = await platform.request("POST", `/v1/sessions/${parent}/events`, {
      events: [{ type: "user.tool_confirmation", tool_use_id: askedIds[0], result: "allow" }],
    });
    expect(stray.status).toBe(400);
  }, 120_000);

  it("carves each child's budget from the parent's, holds it while the child runs and charges what it spent", async () => {
    // 20 000 tokens; the spawning request costs 1 000, so 19 000 are left to give.
    const parent = await delegate(20_000, "delegate: burn@4000, a@3000, greedy@999999");
    await platform.waitForIdle(parent, "end_turn", 0, 60_000);
    const events = await platform.events(parent);

    // Each child got exactly the budget it asked for; a spawn asking more than is left is an error
    // result naming what is left, and created nothing.
    const created = ofType(events, "session.child_created");
    expect(created.map((event) => event.token_budget)).toEqual([4_000, 3_000]);
    const refused = ofType(events, "agent.tool_result").filter((event) => event.is_error);
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(refused[0]?.content)).toContain("ask for at most 12000");
    const [burn, done] = created.map((event) => event.child_session_id);
    const burnt = await platform.request("GET", `/v1/sessions/${burn}`);
    expect(burnt.body).toMatchObject({
      budget: { max_total_tokens: 4_000 },
      status: "idle",
      stop_reason: { type: "budget_reached" },
    });

    // The child that exhausted its budget reported that to the parent instead of hanging it.
    expect(waitAnswer(events).results).toMatchObject([
      { id: burn, status: "budget_reached" },
      { id: done, status: "completed", result: "done a" },
    ]);

    // The parent was charged what each child spent in place of the budget it held for it.
    const completed = ofType(events, "session.child_completed");
    const spent = tokens(DELEGATING_USAGE.burn);
    const reported = tokens(DELEGATING_USAGE.turn);
    expect(completed.map((event) => [event.child_session_id, event.tokens_used, event.token_budget])).toEqual(
      expect.arrayContaining([
        [burn, spent, 4_000],
        [done, reported, 3_000],
      ]),
    );
    const after = await platform.request("GET", `/v1/sessions/${parent}`);
    expect(after.body.delegated_tokens).toBe(spent + reported);
    expect(tokens(after.body.usage)).toBe(tokens(DELEGATING_USAGE.spawn) + 2 * reported);
  }, 120_000);

  it("a parent that gave away all it had left stops until its child's unspent tokens come back", async () => {
    // 5 000 tokens: 1 000 for the spawning request, the other 4 000 given to the child.
    const parent = await delegate(5_000, "delegate: a@4000");
    await platform.waitForIdle(parent, "end_turn", 0, 60_000);
    const events = await platform.events(parent);
    const types = events.map((event) => event.type);
    // It could not spend what its child was given: it stopped before its next request...
    const stopped = events.findIndex(
      (event) => event.type === "session.status_idle" && event.stop_reason.type === "budget_reached",
    );
    expect(stopped).toBeGreaterThan(types.indexOf("session.child_created"));
    expect(
      events.slice(0, stopped).filter((event) => event.type === "span.model_request_start"),
    ).toHaveLength(1);
    // ...and went on once the child finished and the rest of its budget came back.
    expect(types.indexOf("session.child_completed")).toBeGreaterThan(stopped);
    expect(waitAnswer(events).results).toMatchObject([{ status: "completed", result: "done a" }]);
    const after = await platform.request("GET", `/v1/sessions/${parent}`);
    expect(after.body.delegated_tokens).toBe(tokens(DELEGATING_USAGE.turn));
  }, 120_000);

  it("a child runs the model it was spawned with, of its agent's provider; another provider's is refused", async () => {
    const parent = await delegate(
      null,
      "delegate: which model#fake-gpt-mini, which model#anthropic/claude-haiku-4-5",
    );
    await platform.waitForIdle(parent, "end_turn", 0, 60_000);
    const events = await platform.events(parent);
    const [child] = ofType(events, "session.child_created").map((event) => event.child_session_id);
    expect(ofType(events, "session.child_created")).toHaveLength(1);
    const row = await platform.request("GET", `/v1/sessions/${child}`);
    expect(row.body.model).toBe("fake-gpt-mini");
    // Its requests went to that model (the fake reports the model it was asked for).
    expect(waitAnswer(events).results).toEqual([
      { id: child, status: "completed", result: "model fake-gpt-mini" },
    ]);
    expect(ofType(await platform.events(child ?? ""), "span.model_request_start")[0]?.model).toBe(
      "fake-gpt-mini",
    );
    const refused = ofType(events, "agent.tool_result").filter((event) => event.is_error);
    expect(JSON.stringify(refused[0]?.content)).toContain("this agent talks to openai_compatible");
    // The parent itself still runs its agent's model.
    const own = await platform.request("GET", `/v1/sessions/${parent}`);
    expect(own.body.model).toBeNull();
    expect(ofType(events, "span.model_request_start")[0]?.model).toBe("fake-gpt");
  }, 120_000);

  it("sessions_send steers a sub-session that has not finished and subagents lists and kills them", async () => {
    platform.fake.setScript({ defaultTurn: (request) => steering(request) ?? delegatingTurn(request) });
    try {
      const parent = await delegate(null, "steer and kill");
      await platform.waitForIdle(parent, "end_turn", 0, 60_000);
      const events = await platform.events(parent);
      const [listed, sent, killed, again] = ofType(events, "agent.tool_result").slice(2);
      const children = ofType(events, "session.child_created").map((event) => event.child_session_id);
      const listedIds = (JSON.parse(textOf(listed?.content)) as { children: { id: string }[] }).children.map(
        (child) => child.id,
      );
      expect([...listedIds].sort()).toEqual([...children].sort());
      const [steered, archived] = listedIds;
      expect(JSON.parse(textOf(sent?.content))).toMatchObject({ session_id: steered });
      expect(JSON.parse(textOf(killed?.content))).toEqual({ session_id: archived, killed: true });

      // The steered child woke on the message and reported; the killed one ended archived.
      const steeredEvents = await platform.events(steered ?? "");
      expect(ofType(steeredEvents, "user.message").map((event) => textOf(event.content))).toContain(
        "report now",
      );
      expect(ofType(await platform.events(archived ?? ""), "session.status_terminated")).toMatchObject([
        { reason: "archived" },
      ]);
      expect(waitAnswer(events).results).toMatchObject([
        { id: steered, status: "completed", result: "reported after steering" },
        { id: archived, status: "archived" },
      ]);
      // A finished sub-session takes no more messages: an error result, and nothing written to it.
      expect(again?.is_error).toBe(true);
      expect(textOf(again?.content)).toContain("has finished");
      expect((await platform.events(steered ?? "")).length).toBe(steeredEvents.length);
    } finally {
      platform.fake.setScript({ defaultTurn: delegatingTurn });
    }
  }, 120_000);
});

const textOf = (content: Array<{ type: string; text?: string }> | undefined) =>
  (content ?? []).map((block) => block.text ?? "").join("");

/**
 * A parent that spawns two chatting children, lists them with `subagents`, steers the first with
 * `sessions_send`, kills the second, waits for both, then messages the finished one again.
 */
function steering(request: FakeRequestView): Turn | null {
  if (request.lastUserText !== "steer and kill") return null;
  const [last] = request.toolResults.slice(-1);
  if (last === undefined) {
    const chat = { name: "spawn_session", input: { task: "child: chat" } };
    return { toolCalls: [chat, chat] };
  }
  const value = last.isError ? {} : (JSON.parse(last.text) as Record<string, unknown>);
  if (last.name === "spawn_session") return { toolCalls: [{ name: "subagents", input: { action: "list" } }] };
  if (last.name === "subagents" && "children" in value) {
    const [steered, archived] = (value.children as { id: string }[]).map((child) => child.id);
    return {
      toolCalls: [
        { name: "sessions_send", input: { session_id: steered, message: "report now" } },
        { name: "subagents", input: { action: "kill", session_id: archived } },
      ],
    };
  }
  if (last.name === "subagents") {
    const ids = request.toolResults.map(
      (result) => (JSON.parse(result.text) as { session_id: string }).session_id,
    );
    return { toolCalls: [{ name: "wait_for_sessions", input: { ids } }] };
  }
  if (last.name === "wait_for_sessions") {
    const [first] = (JSON.parse(last.text) as { results: { id: string }[] }).results;
    return { toolCalls: [{ name: "sessions_send", input: { session_id: first?.id, message: "again" } }] };
  }
  return { text: "steered" };
}
