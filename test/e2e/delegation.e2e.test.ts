import type { SessionEvent } from "@wakeloop/contracts";
import type { FakeRequestView, Turn } from "@wakeloop/fake-model";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #11, openboa's delegation through the running services: the tool names follow the naming
// profile of the policy (one name per implementation, the others explained in /tools and refused), and
// `session_run_child` advances a direct sub-session for a bounded number of model requests while its
// parent waits, then answers with the sub-session's summary.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 2 });
  platform.fake.setScript({ defaultTurn: delegating });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

interface RunPlan {
  task: string;
  message?: string;
  max_cycles?: number;
}

/**
 * The fake model as an openboa agent. A parent told `run {plan}` delegates `plan.task` with
 * `session_delegate`, runs that child with `session_run_child` and ends its turn quoting the answer;
 * `old name` calls `spawn_session`. Children: "child: chat" ends its turn ("listening"), "child:
 * summarize" reads a state key then answers "summary ready", "child: loop" calls set_state forever,
 * "child: slow" answers after 20 s.
 */
function delegating(request: FakeRequestView): Turn {
  const [last] = request.toolResults.slice(-1);
  const said = request.lastUserText;
  if (said.startsWith("run ")) {
    const plan = JSON.parse(said.slice("run ".length)) as RunPlan;
    if (last === undefined) return { toolCalls: [{ name: "session_delegate", input: { task: plan.task } }] };
    if (last.name === "session_delegate" && !last.isError) {
      const { id } = JSON.parse(last.text) as { id: string };
      const { task: _, ...run } = plan;
      return { toolCalls: [{ name: "session_run_child", input: { session_id: id, ...run } }] };
    }
    return { text: `child ran: ${last.text}` };
  }
  if (said === "kill slow") {
    // Delegate, ask which child to kill (the test answers once the child is in its model call), kill it.
    if (last === undefined)
      return { toolCalls: [{ name: "session_delegate", input: { task: "child: slow" } }] };
    if (last.name === "session_delegate") {
      return { toolCalls: [{ name: "ask_user", input: { question: "Which one?" } }] };
    }
    if (last.name === "ask_user") {
      return { toolCalls: [{ name: "subagents", input: { action: "kill", session_id: last.text } }] };
    }
    return { text: "killed" };
  }
  if (said === "old name") {
    if (last === undefined) return { toolCalls: [{ name: "spawn_session", input: { task: "child: chat" } }] };
    return { text: "refused" };
  }
  if (said === "child: summarize") {
    if (last === undefined) return { toolCalls: [{ name: "get_state", input: { key: "notes" } }] };
    return { text: "summary ready" };
  }
  if (said === "child: loop") {
    return { toolCalls: [{ name: "set_state", input: { key: "n", value: request.toolResults.length } }] };
  }
  if (said === "child: slow") return { text: "slow answer", delayMs: 20_000 };
  if (said === "child: chat") return { text: "listening" };
  return { text: "ok" };
}

async function openboaAgent(toolPolicy: Record<string, unknown> = { tool_names: "openboa" }) {
  const created = await platform.request("POST", "/v1/agents", {
    name: "openboa",
    model: platform.fakeModel(),
    tool_policy: toolPolicy,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function session(agent: string): Promise<string> {
  const created = await platform.request("POST", "/v1/sessions", { agent });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function say(sessionId: string, text: string): Promise<void> {
  await platform.send(sessionId, { type: "user.message", content: [{ type: "text", text }] });
}

function ofType<T extends SessionEvent["type"]>(events: SessionEvent[], type: T) {
  return events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);
}

const textOf = (content: Array<{ type: string; text?: string }> | undefined) =>
  (content ?? []).map((block) => block.text ?? "").join("");

/** The parent's run: its recorded call, the orchestrator's answer (parsed) and the child's id. */
async function runOf(parent: string) {
  const events = await platform.events(parent);
  const [call] = ofType(events, "agent.custom_tool_use").filter((use) => use.name === "session_run_child");
  const [answer] = ofType(events, "user.custom_tool_result").filter(
    (result) => result.custom_tool_use_id === call?.id,
  );
  const [child] = ofType(events, "session.child_created").map((event) => event.child_session_id);
  return {
    call,
    answer,
    summary:
      answer === undefined ? undefined : (JSON.parse(textOf(answer.content)) as Record<string, unknown>),
    child: child ?? "",
    events,
  };
}

describe("openboa delegation", () => {
  it("offers one spawn name per naming profile, explains the hidden ones and refuses calls to them", async () => {
    const bad = await platform.request("POST", "/v1/agents", {
      name: "bad",
      model: platform.fakeModel(),
      tool_policy: { tool_names: "klingon" },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("tool_names");
    // Names are the agent's and the platform's choice; an environment only narrows.
    const environment = await platform.request("POST", "/v1/environments", {
      name: "named",
      tool_policy: { tool_names: "openclaw" },
    });
    expect(environment.status).toBe(400);
    expect(JSON.stringify(environment.body)).toContain("an environment cannot choose tool names");

    const byDefault = await platform.request(
      "GET",
      `/v1/sessions/${await session(await openboaAgent({}))}/tools`,
    );
    const defaultNames = (byDefault.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(defaultNames).toContain("spawn_session");
    expect(defaultNames).not.toContain("session_delegate");
    expect(defaultNames).not.toContain("sessions_spawn");

    const id = await session(await openboaAgent());
    const tools = await platform.request("GET", `/v1/sessions/${id}/tools`);
    const offered = (tools.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(["session_delegate", "session_run_child", "subagents"]));
    expect(offered).not.toContain("spawn_session");
    expect(offered).not.toContain("sessions_spawn");
    expect(tools.body.excluded).toContainEqual({
      tool: "spawn_session",
      step: "tool_names",
      rule: "tool_names:openboa",
      reason:
        'spawn_session is another name of session_delegate (one implementation); the "openboa" tool names (agent.tool_names) offer session_delegate',
    });

    // A call to a hidden name is refused like any tool not offered: an error result, no sub-session.
    await say(id, "old name");
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    const events = await platform.events(id);
    const [refused] = ofType(events, "agent.tool_result");
    expect(refused?.is_error).toBe(true);
    expect(textOf(refused?.content)).toContain(
      'the "openboa" tool names (agent.tool_names) offer session_delegate',
    );
    expect(ofType(events, "session.child_created")).toEqual([]);
  }, 120_000);

  it("delegates, runs the child for a bounded run, gets its summary and finishes", async () => {
    const parent = await session(await openboaAgent());
    await say(
      parent,
      `run ${JSON.stringify({ task: "child: chat", message: "child: summarize", max_cycles: 3 })}`,
    );
    await platform.waitForIdle(parent, "end_turn", 0, 90_000);
    const { call, answer, summary, child, events } = await runOf(parent);
    expect(call).toBeDefined();
    expect(answer?.is_error).toBeFalsy();
    expect(summary).toMatchObject({
      session_id: child,
      relation_to_current: "child",
      status: "idle",
      max_cycles: 3,
      result: "summary ready",
      requires_action: null,
      outcome_status: "no_outcome",
    });
    expect(summary?.cycles_used).toBeLessThanOrEqual(3);
    // The parent read the answer and ended its turn with it.
    expect(textOf(ofType(events, "agent.message").at(-1)?.content)).toContain('"result":"summary ready"');
    // The child's message was written after the parent's call was recorded (invariant 4), and the child
    // is still a live sub-session: the run advanced it, it did not end it.
    const childEvents = await platform.events(child);
    const [, message] = ofType(childEvents, "user.message");
    expect(textOf(message?.content)).toBe("child: summarize");
    expect(Date.parse(message?.created_at ?? "")).toBeGreaterThanOrEqual(Date.parse(call?.created_at ?? ""));
    const row = await platform.request("GET", `/v1/sessions/${child}`);
    expect(row.body).toMatchObject({ parent_session_id: parent, status: "idle" });
  }, 120_000);

  it("a child that needs more cycles than the run allows returns out_of_cycles, and stays idle", async () => {
    const parent = await session(await openboaAgent());
    await say(
      parent,
      `run ${JSON.stringify({ task: "child: chat", message: "child: loop", max_cycles: 2 })}`,
    );
    await platform.waitForIdle(parent, "end_turn", 0, 90_000);
    const { summary, child } = await runOf(parent);
    expect(summary).toMatchObject({
      session_id: child,
      status: "out_of_cycles",
      cycles_used: 2,
      max_cycles: 2,
    });
    // The child made exactly the two requests of the run after the message, and then waited.
    const childEvents = await platform.events(child);
    const message = ofType(childEvents, "user.message").find(
      (event) => textOf(event.content) === "child: loop",
    );
    const requests = ofType(childEvents, "span.model_request_start").filter(
      (event) => event.seq > (message?.seq ?? 0),
    );
    expect(requests).toHaveLength(2);
    expect(ofType(childEvents, "agent.tool_use").filter((use) => use.name === "set_state")).toHaveLength(2);
    const row = await platform.request("GET", `/v1/sessions/${child}`);
    expect(row.body.status).toBe("idle");
  }, 120_000);

  it("refuses a session that is not a direct child, writing nothing to it", async () => {
    const agent = await openboaAgent();
    const stranger = await session(agent);
    const parent = await session(agent);
    platform.fake.enqueue(
      { toolCalls: [{ name: "session_run_child", input: { session_id: stranger, message: "hi" } }] },
      { text: "it was not mine" },
    );
    await say(parent, "a stranger");
    await platform.waitForIdle(parent, "end_turn", 0, 60_000);
    const events = await platform.events(parent);
    const [answer] = ofType(events, "user.custom_tool_result");
    expect(answer?.is_error).toBe(true);
    expect(textOf(answer?.content)).toBe(`${stranger} is not a sub-session of this session`);
    expect(await platform.events(stranger)).toEqual([]);
  }, 120_000);

  it("subagents kill stops a sub-session in the middle of its model call", async () => {
    const parent = await session(await openboaAgent());
    await say(parent, "kill slow");
    const asked = await platform.waitForIdle(parent, "requires_action", 0, 60_000);
    const { child } = await runOf(parent);
    const [question] = ofType(await platform.events(parent), "agent.custom_tool_use");
    // The child is in its 20 s model request.
    const started = await platform.waitForEvent(
      child,
      (event) => event.type === "span.model_request_start",
      60_000,
    );
    const before = Date.now();
    await platform.send(parent, {
      type: "user.custom_tool_result",
      custom_tool_use_id: question?.id,
      content: [{ type: "text", text: child }],
    });
    await platform.waitForIdle(parent, "end_turn", asked.seq, 60_000);
    const ended = await platform.waitForEvent(
      child,
      (event) => event.type === "span.model_request_end" && event.seq > started.seq,
      15_000,
    );
    // The request was aborted, not answered: the kill reached the worker holding the child at once.
    expect(Date.now() - before).toBeLessThan(15_000);
    expect(ended).toMatchObject({ is_error: true });
    const childEvents = await platform.events(child);
    expect(ofType(childEvents, "session.status_terminated")).toMatchObject([{ reason: "archived" }]);
    expect(ofType(childEvents, "agent.message").map((event) => textOf(event.content))).not.toContain(
      "slow answer",
    );
  }, 120_000);

  it("interrupting a parent that waits on a run stops the child too", async () => {
    const parent = await session(await openboaAgent());
    await say(parent, `run ${JSON.stringify({ task: "child: chat", message: "child: slow" })}`);
    const paused = await platform.waitForIdle(parent, "requires_action", 0, 60_000);
    const { child } = await runOf(parent);
    // The child is in its slow model request of the run.
    await platform.waitForEvent(
      child,
      (event, all) => {
        const slow = all.find(
          (seen) => seen.type === "user.message" && textOf(seen.content) === "child: slow",
        );
        return slow !== undefined && event.type === "span.model_request_start" && event.seq > slow.seq;
      },
      60_000,
    );
    await platform.send(parent, { type: "user.interrupt" });
    await platform.waitForIdle(parent, "end_turn", paused.seq, 60_000);
    const interrupted = await platform.waitForEvent(
      child,
      (event) => event.type === "user.interrupt",
      60_000,
    );
    await platform.waitForIdle(child, "end_turn", interrupted.seq, 15_000);
    // The run's call was answered by the interrupt, not by a summary.
    const { answer } = await runOf(parent);
    expect(answer === undefined || answer.is_error !== false).toBe(true);
    expect(
      ofType(await platform.events(child), "agent.message").map((event) => textOf(event.content)),
    ).not.toContain("slow answer");
  }, 120_000);
});
