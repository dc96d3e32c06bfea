import type { SessionEvent } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Time through the running services: a reminder the model sets comes back into its session, and a
// cron task fires on schedule once per occurrence while one of two orchestrators is killed (-9).

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1, env: { SCHEDULE_POLL_INTERVAL_MS: "100" } });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function newAgent(): Promise<string> {
  const agent = await platform.request("POST", "/v1/agents", {
    name: "timekeeper",
    model: platform.fakeModel(),
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  return agent.body.id as string;
}

const textOf = (event: SessionEvent): string =>
  event.type === "user.message"
    ? event.content.map((part) => (part.type === "text" ? part.text : "")).join("")
    : "";

describe("reminders", () => {
  it("fire once into the session that set them and wake it", async () => {
    const at = new Date(Date.now() + 4_000).toISOString();
    platform.fake.enqueue(
      {
        match: (request) => request.lastUserText === "remind me",
        toolCalls: [{ name: "set_reminder", input: { at, message: "check the oven" } }],
      },
      { match: (request) => request.toolResults.length > 0, text: "I will remind you" },
      {
        match: (request) => request.lastUserText?.includes("check the oven") === true,
        text: "the oven is fine",
      },
    );
    const agentId = await newAgent();
    const session = await platform.request("POST", "/v1/sessions", { agent: agentId });
    const id = session.body.id as string;
    await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "remind me" }] }],
    });
    const set = await platform.waitForIdle(id, "end_turn");
    const result = (await platform.events(id)).find((event) => event.type === "agent.tool_result");
    expect(result?.type === "agent.tool_result" && result.is_error).toBe(false);

    const reminded = await platform.waitForEvent(
      id,
      (event) => textOf(event).includes("check the oven"),
      15_000,
    );
    await platform.waitForIdle(id, "end_turn", reminded.seq);
    const events = await platform.events(id);
    expect(events.filter((event) => textOf(event).includes("check the oven"))).toHaveLength(1);
    expect(reminded.seq).toBeGreaterThan(set.seq);
    expect(
      events.some((e) => e.type === "agent.message" && JSON.stringify(e).includes("the oven is fine")),
    ).toBe(true);
  }, 60_000);

  it("refuses a time in the past as a tool error and stores nothing", async () => {
    platform.fake.enqueue(
      {
        match: (request) => request.lastUserText === "remind me yesterday",
        toolCalls: [{ name: "set_reminder", input: { at: "2001-01-01T00:00:00Z", message: "too late" } }],
      },
      { match: (request) => request.toolResults.length > 0, text: "that time has passed" },
    );
    const agentId = await newAgent();
    const { id, events } = await platform.runTurn(agentId, "remind me yesterday");
    const result = events.find((event) => event.type === "agent.tool_result");
    expect(result?.type === "agent.tool_result" && result.is_error).toBe(true);
    expect(JSON.stringify(result)).toContain("in the past");
    const rows = await platform.db
      .selectFrom("schedules")
      .select("id")
      .where("session_id", "=", id)
      .execute();
    expect(rows).toEqual([]);
  }, 60_000);
});

describe("scheduled tasks", () => {
  it("fire on schedule once per occurrence across two orchestrators, one killed -9 in between", async () => {
    await platform.startOrchestrator("orchestrator-2");
    const agentId = await newAgent();
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    const created = await client.scheduledTasks.create(agentId, {
      name: "tick",
      task: "run the tick",
      cron: "*/2 * * * * *",
      token_limit: 10_000,
      model: "fake-gpt-mini",
    });
    expect(created.model).toBe("fake-gpt-mini");
    const taskId = created.id;
    const firings = () =>
      platform.db
        .selectFrom("schedule_firings")
        .selectAll()
        .where("schedule_id", "=", taskId)
        .orderBy("occurrence_at")
        .execute();

    await expect
      .poll(async () => (await firings()).length, { timeout: 20_000, interval: 200 })
      .toBeGreaterThanOrEqual(2);
    platform.app("orchestrator").kill("SIGKILL");
    const atKill = (await firings()).length;
    await expect
      .poll(async () => (await firings()).length, { timeout: 20_000, interval: 200 })
      .toBeGreaterThanOrEqual(atKill + 3);
    expect((await client.scheduledTasks.disable(agentId, taskId)).enabled).toBe(false);

    const fired = await firings();
    expect(fired.every((firing) => firing.outcome === "fired")).toBe(true);
    // Occurrences on the two-second grid, each once. (A replica stalled past the next occurrence would
    // coalesce the ones it missed into one firing, by the catch-up policy, so gaps are multiples of 2 s.)
    const times = fired.map((firing) => firing.occurrence_at.getTime());
    for (const time of times) expect(time % 2_000).toBe(0);
    for (let i = 1; i < times.length; i += 1)
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(2_000);
    const sessions = await platform.db
      .selectFrom("sessions")
      .select(["id", "state", "model"])
      .where("agent_id", "=", agentId)
      .execute();
    expect(sessions.map((session) => session.id).sort()).toEqual(
      fired.map((firing) => firing.session_id).sort(),
    );
    // Each fresh session got the prompt once, with the task's budget and model, and its wake ran to the
    // end on that model.
    for (const session of sessions) {
      expect(session.state).toMatchObject({ budget: { max_total_tokens: 10_000 }, title: "tick" });
      expect(session.model).toBe("fake-gpt-mini");
      await platform.waitForIdle(session.id, "end_turn");
      const events = await platform.events(session.id);
      expect(events.filter((event) => event.type === "user.message").map(textOf)).toEqual(["run the tick"]);
      const starts = events.filter((event) => event.type === "span.model_request_start");
      expect(starts.map((event) => (event.type === "span.model_request_start" ? event.model : ""))).toEqual([
        "fake-gpt-mini",
      ]);
    }
  }, 90_000);
});
