import type { SessionEvent } from "@wakeloop/contracts";
import { delegatingTurn, Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #11 sub-sessions through the running services: a parent spawns three children in parallel,
// waits for them, gets their results and finishes; interrupting a parent stops its children and
// archiving it ends them.

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
});
