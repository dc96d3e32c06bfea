import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Outcomes and evaluators through the services: an outcome defined by a tool or by a person, attempts
// graded by the evaluator model (the fake model, its own prompt) and by a rubric, the trend and history
// read back, and memory_promote_note held back by the evaluator until promotion is ready.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const created = await platform.request("POST", path, body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function send(sessionId: string, ...events: unknown[]): Promise<void> {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, { events });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });

type ToolResult = Extract<SessionEvent, { type: "agent.tool_result" }>;
type ToolUse = Extract<SessionEvent, { type: "agent.tool_use" }>;

/** The tool results of a session, parsed from their JSON text (errors stay text). */
async function results(sessionId: string): Promise<{ isError: boolean; value: unknown }[]> {
  return (await platform.events(sessionId))
    .filter((event): event is ToolResult => event.type === "agent.tool_result")
    .map((event) => {
      const text = event.content.map((block) => ("text" in block ? block.text : "")).join("");
      return { isError: event.is_error, value: event.is_error ? text : JSON.parse(text) };
    });
}

const CRITERIA = ["mentions the version", "lists the fixes"];
const verdict = (fixesListed: boolean) => ({
  text: JSON.stringify({
    criteria_results: [
      { criterion: "mentions the version", met: true, evidence: "says 1.2" },
      { criterion: "lists the fixes", met: fixesListed, evidence: fixesListed ? "login fix" : "no fixes" },
    ],
    feedback: fixesListed ? "Good." : "List the fixes.",
  }),
});
const NOTE = "Release notes list every fix.";

describe("outcomes", () => {
  it("grades attempts with the evaluator model and gates promotion until promotionReady", async () => {
    // memory_promote_note keeps its default always_ask: a gated call is refused without asking anyone.
    const agent = await create("/v1/agents", { name: "outcomes", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    const before = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [
          {
            name: "outcome_define",
            input: { title: "Write the release note", criteria: CRITERIA, evaluator_prompt: "Be strict." },
          },
        ],
      },
      { toolCalls: [{ name: "permissions_check", input: { tool_name: "memory_promote_note" } }] },
      { toolCalls: [{ name: "memory_promote_note", input: { note: NOTE } }] },
      { toolCalls: [{ name: "outcome_evaluate", input: { attempt: "Release 1.2." } }] },
      verdict(false),
      { toolCalls: [{ name: "outcome_evaluate", input: { attempt: "Release 1.2: fixed login." } }] },
      verdict(true),
      { toolCalls: [{ name: "outcome_history", input: {} }] },
      { toolCalls: [{ name: "memory_promote_note", input: { note: NOTE } }] },
      { toolCalls: [{ name: "session_get_snapshot", input: {} }] },
      { toolCalls: [{ name: "session_list", input: { has_outcome: true } }] },
      {
        toolCalls: [
          { name: "session_list", input: { outcome_trend: "improving", promotion_ready: true } },
          { name: "session_list", input: { outcome_trend: "regressing" } },
          { name: "session_list", input: { outcome_status: "no_outcome" } },
          { name: "session_list", input: { outcome_status: "promotion_ready", limit: 1 } },
        ],
      },
      { text: "Done." },
    );
    await send(id, say("write the release note"));
    const asked = await platform.waitForIdle(id, "requires_action", 0, 60_000);
    const uses = (await platform.events(id)).filter(
      (event): event is ToolUse => event.type === "agent.tool_use" && event.name === "memory_promote_note",
    );
    // The gated call was denied at planning; the one after promotionReady waits for the person.
    expect(uses.map((use) => use.evaluated_permission)).toEqual(["deny", "ask"]);
    expect(asked).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [uses[1]?.id] } });
    await send(id, { type: "user.tool_confirmation", tool_use_id: uses[1]?.id, result: "allow" });
    await platform.waitForIdle(id, "end_turn", asked.seq, 60_000);
    const [defined, check, refused, first, second, history, promoted, snapshot, listed, ...filtered] =
      await results(id);

    expect(defined).toMatchObject({
      isError: false,
      value: { outcome: { title: "Write the release note", criteria: CRITERIA, iterations: 0, trend: null } },
    });
    expect(check).toMatchObject({
      isError: false,
      value: {
        tool: "memory_promote_note",
        available: true,
        evaluator_gated: true,
        blocked_by_evaluator: true,
        next_outcome_step: "outcome_evaluate",
      },
    });
    expect(refused).toMatchObject({ isError: true, value: expect.stringMatching(/gated on the evaluator/) });
    expect(first).toMatchObject({
      isError: false,
      value: {
        outcome: {
          iterations: 1,
          latest: { evaluator: "model", score: 0.5, passed: false, feedback: "List the fixes." },
          trend: "first_iteration",
          promotion_ready: false,
          next_step: "outcome_evaluate",
        },
      },
    });
    expect(second).toMatchObject({
      isError: false,
      value: { outcome: { iterations: 2, trend: "improving", promotion_ready: true, next_step: null } },
    });
    expect(history).toMatchObject({
      isError: false,
      value: {
        attempts: [
          { iteration: 1, score: 0.5 },
          { iteration: 2, score: 1 },
        ],
      },
    });
    expect(promoted).toMatchObject({ isError: false });
    expect(snapshot).toMatchObject({
      isError: false,
      value: {
        has_outcome: true,
        outcome_status: "promotion_ready",
        outcome_trend: "improving",
        promotion_ready: true,
      },
    });

    expect(listed).toMatchObject({
      isError: false,
      value: {
        sessions: [
          { id, outcome_status: "promotion_ready", outcome_trend: "improving", promotion_ready: true },
        ],
      },
    });

    // The trend filters of the reference keep the sessions whose evaluator posture matches.
    const ids = filtered.map((result) =>
      (result.value as { sessions: { id: string }[] }).sessions.map((session) => session.id),
    );
    expect(ids).toEqual([[id], [], [], [id]]);
    expect(filtered.map((result) => (result.value as { next_after_id: unknown }).next_after_id)).toEqual([
      null,
      null,
      null,
      null,
    ]);

    // The evaluator call was the model with the outcome's own prompt and criteria, without tools.
    const evaluatorCall = platform.fake.requests[before + 4]?.body as {
      messages: Array<{ role: string; content: unknown }>;
      tools?: unknown[];
    };
    expect(JSON.stringify(evaluatorCall.messages[0])).toContain("Be strict.");
    expect(JSON.stringify(evaluatorCall.messages[1])).toContain("lists the fixes");
    expect(evaluatorCall.tools ?? []).toEqual([]);
  });

  it("wakes an idle session once for a person's user.define_outcome, and the model reads the outcome", async () => {
    const agent = await create("/v1/agents", { name: "woken", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    const before = platform.fake.requests.length;
    platform.fake.enqueue({ text: "Working toward it." });
    // No user.message: the outcome alone is the input.
    await send(id, {
      type: "user.define_outcome",
      description: "Ship release 1.2\nwith notes",
      criteria: ["notes list every fix"],
    });
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    const requests = platform.fake.requests.slice(before).filter((request) => request.view !== undefined);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.view?.lastUserText).toContain("Ship release 1.2\nwith notes");
    expect(requests[0]?.view?.lastUserText).toContain("- notes list every fix");
    const events = await platform.events(id);
    // Exactly one wake ran for it, and nothing is left to wake the session again.
    expect(events.filter((event) => event.type === "session.status_running")).toHaveLength(1);
    const session = await platform.request("GET", `/v1/sessions/${id}`);
    expect(session.body).toMatchObject({
      status: "idle",
      defined_outcome: { title: "Ship release 1.2", criteria: ["notes list every fix"] },
    });
  });

  it("reads a person's user.define_outcome, grades by rubric, and refuses a rubric that misses a criterion", async () => {
    const agent = await create("/v1/agents", { name: "rubric", model: platform.fakeModel() });
    const id = await create("/v1/sessions", { agent });
    platform.fake.enqueue(
      { toolCalls: [{ name: "outcome_read", input: {} }] },
      {
        toolCalls: [
          {
            name: "outcome_grade",
            input: { criteria_results: [{ criterion: "tests pass", met: true, evidence: "green" }] },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: "outcome_grade",
            input: {
              criteria_results: [
                { criterion: "tests pass", met: true, evidence: "green" },
                { criterion: "docs updated", met: false, evidence: "not yet" },
              ],
            },
          },
        ],
      },
      { text: "Half done." },
    );
    await send(
      id,
      {
        type: "user.define_outcome",
        description: "Fix the bug\nand document it",
        criteria: ["tests pass", "docs updated"],
      },
      say("go"),
    );
    await platform.waitForIdle(id, "end_turn", 0, 60_000);
    const [read, incomplete, graded] = await results(id);
    expect(read).toMatchObject({
      isError: false,
      value: { outcome: { title: "Fix the bug", criteria: ["tests pass", "docs updated"], source: "user" } },
    });
    expect(incomplete).toMatchObject({
      isError: true,
      value: expect.stringMatching(/missing: \["docs updated"\]/),
    });
    expect(graded).toMatchObject({
      isError: false,
      value: {
        outcome: { iterations: 1, latest: { evaluator: "rubric", score: 0.5 }, trend: "first_iteration" },
      },
    });
  });
});
