import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The session loop through the public API, every service its own process, two harness workers, the fake
// model speaking the providers' wire protocols. Each test makes its own agent and session.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 2,
    env: { LEASE_SWEEP_INTERVAL_MS: "200", WAKE_REPUBLISH_AFTER_MS: "2000" },
    workerEnv: { LEASE_TTL_MS: "1500", MODEL_RETRY_BASE_MS: "20", MODEL_RETRY_MAX_MS: "50" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function agent(spec: Record<string, unknown> = {}): Promise<string> {
  const created = await platform.request("POST", "/v1/agents", {
    name: "e2e",
    model: platform.fakeModel(),
    system: "You are a test agent.",
    ...spec,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function session(agentId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await platform.request("POST", "/v1/sessions", { agent: agentId, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function send(sessionId: string, ...events: unknown[]) {
  const response = await platform.request("POST", `/v1/sessions/${sessionId}/events`, { events });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.events as SessionEvent[];
}

/** The session's tool-call ledger rows (calls that can have an unknown outcome), oldest first. */
const ledgerOf = (sessionId: string) =>
  platform.db
    .selectFrom("tool_calls")
    .select(["name", "status"])
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .execute();
const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
const types = (events: SessionEvent[]) => events.map((event) => event.type);
const textOf = (event: SessionEvent | undefined) =>
  event && "content" in event
    ? event.content.map((block) => ("text" in block ? block.text : "")).join("")
    : "";

/** Every event once, seqs gapless from 1: the checker run after each scenario. */
function expectWellFormed(events: SessionEvent[]) {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
}

/** The user texts of the index-th model request (OpenAI wire format). */
function userTexts(index: number): string[] {
  const body = platform.fake.requests.filter((request) => request.view)[index]?.body as
    | { messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }> }
    | undefined;
  return (body?.messages ?? [])
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => part.text ?? "").join(""),
    );
}

describe("session loop", () => {
  it("answers a plain turn and records usage", async () => {
    platform.fake.enqueue({ text: "Hello there, human.", usage: { input_tokens: 12, output_tokens: 5 } });
    const id = await session(await agent());
    await send(id, say("hi"));
    await platform.waitForIdle(id, "end_turn");
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(types(events)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    expect(textOf(events[3])).toBe("Hello there, human.");
    expect(events[0]?.processed_at).not.toBeNull();
    const got = await platform.request("GET", `/v1/sessions/${id}`);
    expect(got.body).toMatchObject({
      status: "idle",
      stop_reason: { type: "end_turn" },
      usage: { input_tokens: 12, output_tokens: 5 },
    });
    // Every event of the wake carries the wake's trace.
    const traced = events.filter((event) => event.wake_id);
    expect(new Set(traced.map((event) => event.trace_id)).size).toBe(1);
  });

  it("commits a request's start while the model key is still being read, and sends the request after both", async () => {
    const id = await session(await agent());
    const requests = platform.fake.requests.length;
    // Holding the credential table locked stalls the worker's read of the tenant's model key.
    await platform.db.connection().execute(async (owner) => {
      await sql`BEGIN`.execute(owner);
      try {
        await sql`LOCK TABLE provider_credentials IN ACCESS EXCLUSIVE MODE`.execute(owner);
        await send(id, say("hi"));
        await platform.waitForEvent(id, (event) => event.type === "span.model_request_start", 10_000);
        expect(platform.fake.requests.length).toBe(requests);
      } finally {
        await sql`ROLLBACK`.execute(owner);
      }
    });
    await platform.waitForIdle(id, "end_turn");
    expect(platform.fake.requests.length).toBe(requests + 1);
    expectWellFormed(await platform.events(id));
  });

  it("runs a multi-step tool loop over the Anthropic wire protocol", async () => {
    platform.fake.enqueue(
      { toolCalls: [{ name: "set_state", input: { key: "plan", value: { step: 1 } } }], text: "Saving." },
      { toolCalls: [{ name: "get_state", input: { key: "plan" } }] },
      { text: "The plan is step 1." },
    );
    const before = platform.fake.requests.length;
    const id = await session(await agent({ model: platform.fakeModel("anthropic") }));
    await send(id, say("remember the plan"));
    await platform.waitForIdle(id, "end_turn");
    // The model saw each result of the previous step, not a placeholder.
    const [, second, third] = platform.fake.requests.slice(before).filter((request) => request.view);
    expect(second?.view?.toolResults).toEqual([
      expect.objectContaining({
        name: "set_state",
        isError: false,
        text: expect.stringContaining('"stored":true'),
      }),
    ]);
    expect(third?.view?.toolResults).toEqual([
      expect.objectContaining({
        name: "get_state",
        isError: false,
        text: expect.stringContaining('"step":1'),
      }),
    ]);
    const events = await platform.events(id);
    expectWellFormed(events);
    const results = events.filter((event) => event.type === "agent.tool_result");
    expect(results).toHaveLength(2);
    expect(results.every((result) => result.type === "agent.tool_result" && !result.is_error)).toBe(true);
    expect(JSON.parse(textOf(results[1]))).toEqual({ key: "plan", value: { step: 1 } });
    expect(textOf(events.findLast((event) => event.type === "agent.message"))).toBe("The plan is step 1.");
    // Each call committed with its effect and result, so it can never be unknown: its events are its
    // record, and neither it nor its one-call plan has a ledger row.
    expect(await ledgerOf(id)).toEqual([]);
    expect(
      await platform.db.selectFrom("tool_batches").select("id").where("session_id", "=", id).execute(),
    ).toEqual([]);
  });

  it("pauses an always_ask call until it is allowed, then runs it", async () => {
    const agentId = await agent({
      tools: [{ type: "builtin", configs: [{ name: "set_state", permission_policy: "always_ask" }] }],
    });
    platform.fake.enqueue(
      { toolCalls: [{ name: "set_state", input: { key: "k", value: 1 } }] },
      { text: "Stored it." },
    );
    const id = await session(agentId);
    await send(id, say("store k"));
    const idle = await platform.waitForIdle(id, "requires_action");
    const toolUse = (await platform.events(id)).find((event) => event.type === "agent.tool_use");
    expect(toolUse).toMatchObject({ name: "set_state", evaluated_permission: "ask" });
    expect(idle).toMatchObject({ stop_reason: { type: "requires_action", event_ids: [toolUse?.id] } });
    const pending = await platform.request("GET", `/v1/sessions/${id}/pending`);
    expect(pending.body.data).toEqual([
      { event_id: toolUse?.id, kind: "tool_confirmation", name: "set_state", input: { key: "k", value: 1 } },
    ]);
    // Nothing ran before the allow (invariant 4); the waiting call is in the ledger.
    expect(
      await platform.db.selectFrom("agent_state").selectAll().where("agent_id", "=", agentId).execute(),
    ).toEqual([]);
    expect(await ledgerOf(id)).toEqual([{ name: "set_state", status: "planned" }]);

    await send(id, { type: "user.tool_confirmation", tool_use_id: toolUse?.id, result: "allow" });
    await platform.waitForIdle(id, "end_turn");
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(events.find((event) => event.type === "agent.tool_result")).toMatchObject({
      tool_use_id: toolUse?.id,
      is_error: false,
    });
    expect(
      await platform.db.selectFrom("agent_state").select("value").where("agent_id", "=", agentId).execute(),
    ).toEqual([{ value: 1 }]);
    expect(await ledgerOf(id)).toEqual([{ name: "set_state", status: "succeeded" }]);
  });

  it("returns the deny message as an error result when an always_ask call is denied", async () => {
    const agentId = await agent({ tools: [{ type: "builtin", default_permission_policy: "always_ask" }] });
    platform.fake.enqueue(
      { toolCalls: [{ name: "set_state", input: { key: "k", value: 2 } }] },
      { text: "Understood." },
    );
    const id = await session(agentId);
    await send(id, say("store k"));
    await platform.waitForIdle(id, "requires_action");
    const toolUse = (await platform.events(id)).find((event) => event.type === "agent.tool_use");
    await send(id, {
      type: "user.tool_confirmation",
      tool_use_id: toolUse?.id,
      result: "deny",
      deny_message: "not in prod",
    });
    await platform.waitForIdle(id, "end_turn");
    const result = (await platform.events(id)).find((event) => event.type === "agent.tool_result");
    expect(result).toMatchObject({ is_error: true, content: [{ type: "text", text: "not in prod" }] });
    expect(
      await platform.db.selectFrom("agent_state").selectAll().where("agent_id", "=", agentId).execute(),
    ).toEqual([]);
  });

  it("round-trips a custom tool through the client", async () => {
    const agentId = await agent({
      tools: [
        {
          type: "custom",
          name: "lookup_order",
          description: "Look up an order by id",
          input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        },
      ],
    });
    platform.fake.enqueue(
      { toolCalls: [{ name: "lookup_order", input: { id: "A-7" } }] },
      { text: "Order A-7 shipped." },
    );
    const before = platform.fake.requests.length;
    const id = await session(agentId);
    await send(id, say("where is A-7?"));
    await platform.waitForIdle(id, "requires_action");
    const use = (await platform.events(id)).find((event) => event.type === "agent.custom_tool_use");
    expect(use).toMatchObject({ name: "lookup_order", input: { id: "A-7" } });
    await send(id, {
      type: "user.custom_tool_result",
      custom_tool_use_id: use?.id,
      content: [{ type: "text", text: "shipped" }],
    });
    await platform.waitForIdle(id, "end_turn");
    const second = platform.fake.requests.slice(before).filter((request) => request.view)[1];
    expect(JSON.stringify(second?.body)).toContain("shipped");
  });

  it("stops a slow model response on interrupt", async () => {
    platform.fake.enqueue({ text: "too slow", delayMs: 20_000 });
    const id = await session(await agent());
    const before = platform.fake.requests.length;
    await send(id, say("take your time"));
    await platform.waitForEvent(id, (event) => event.type === "span.model_request_start");
    const started = Date.now();
    await send(id, { type: "user.interrupt" });
    const idle = await platform.waitForIdle(id, "end_turn", 0, 10_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(events.some((event) => event.type === "agent.message")).toBe(false);
    expect(idle.seq).toBe(events.at(-1)?.seq);
    await expect.poll(() => platform.fake.requests[before]?.aborted).toBe(true);
  });

  it("clears pending confirmations when an idle session waiting on them is interrupted", async () => {
    const agentId = await agent({ tools: [{ type: "builtin", default_permission_policy: "always_ask" }] });
    platform.fake.enqueue({ toolCalls: [{ name: "set_state", input: { key: "k", value: 3 } }] });
    const id = await session(agentId);
    await send(id, say("store k"));
    await platform.waitForIdle(id, "requires_action");
    const toolUse = (await platform.events(id)).find((event) => event.type === "agent.tool_use");
    await send(id, { type: "user.interrupt" });
    const idle = await platform.waitForEvent(
      id,
      (event, all) =>
        event.type === "session.status_idle" &&
        event.seq > (all.find((e) => e.type === "user.interrupt")?.seq ?? 1e9),
    );
    expect(idle).toMatchObject({ stop_reason: { type: "end_turn" } });
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(events.find((event) => event.type === "agent.tool_result")).toMatchObject({
      tool_use_id: toolUse?.id,
      is_error: true,
    });
    expect((await platform.request("GET", `/v1/sessions/${id}/pending`)).body.data).toEqual([]);
    // The cleared call can no longer be allowed.
    const late = await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.tool_confirmation", tool_use_id: toolUse?.id, result: "allow" }],
    });
    expect(late.status).toBe(400);
    expect(
      await platform.db.selectFrom("agent_state").selectAll().where("agent_id", "=", agentId).execute(),
    ).toEqual([]);
  });

  it("stops a running wake when its session is archived, and stays terminated", async () => {
    platform.fake.enqueue({ text: "never delivered", delayMs: 20_000 });
    const id = await session(await agent());
    await send(id, say("long one"));
    await platform.waitForEvent(id, (event) => event.type === "span.model_request_start");
    const archived = await platform.request("POST", `/v1/sessions/${id}/archive`);
    expect(archived.body).toMatchObject({ status: "terminated", termination_reason: "archived" });
    await expect
      .poll(
        async () =>
          (await platform.db.selectFrom("wakes").select("status").where("session_id", "=", id).execute()).map(
            (w) => w.status,
          ),
        {
          timeout: 10_000,
        },
      )
      .toEqual(["completed"]);
    expect((await platform.request("GET", `/v1/sessions/${id}`)).body.status).toBe("terminated");
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(events.some((event) => event.type === "agent.message")).toBe(false);
    expect(
      (await platform.request("POST", `/v1/sessions/${id}/events`, { events: [say("hello?")] })).status,
    ).toBe(409);
  });

  it("sees a message sent while running at the next model request", async () => {
    platform.fake.enqueue(
      { toolCalls: [{ name: "list_state_keys", input: {} }], delayMs: 1_500 },
      { text: "Noted both." },
    );
    const before = platform.fake.requests.filter((request) => request.view).length;
    const id = await session(await agent());
    await send(id, say("first"));
    await platform.waitForEvent(id, (event) => event.type === "span.model_request_start");
    await send(id, say("second"));
    await platform.waitForIdle(id, "end_turn");
    expect(userTexts(before + 1)).toEqual(["first", "second"]);
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(
      events.filter((event) => event.type === "user.message").every((event) => event.processed_at !== null),
    ).toBe(true);
  });

  it("idles with budget_reached and resumes when the budget is raised", async () => {
    platform.fake.enqueue(
      { toolCalls: [{ name: "list_state_keys", input: {} }], usage: { input_tokens: 40, output_tokens: 20 } },
      { text: "Done after the raise.", usage: { input_tokens: 10, output_tokens: 5 } },
    );
    const id = await session(await agent({ budget: { max_total_tokens: 50 } }));
    await send(id, say("go"));
    await platform.waitForIdle(id, "budget_reached");
    expect((await platform.request("GET", `/v1/sessions/${id}`)).body.usage).toMatchObject({
      input_tokens: 40,
      output_tokens: 20,
    });
    const raised = await platform.request("POST", `/v1/sessions/${id}`, {
      budget: { max_total_tokens: 1_000 },
    });
    expect(raised.status).toBe(200);
    await platform.waitForIdle(id, "end_turn");
    expect(textOf((await platform.events(id)).findLast((event) => event.type === "agent.message"))).toBe(
      "Done after the raise.",
    );
  });

  it("retries an overloaded model and goes on", async () => {
    platform.fake.enqueue(
      { error: { status: 529, type: "overloaded_error", message: "busy" } },
      { text: "Back again." },
    );
    const id = await session(await agent({ model: platform.fakeModel("anthropic") }));
    await send(id, say("hello?"));
    await platform.waitForIdle(id, "end_turn");
    const events = await platform.events(id);
    expect(events.find((event) => event.type === "session.error")).toMatchObject({
      error: { type: "model_overloaded", retry_status: { type: "retrying", attempt: 1 } },
    });
    expect(textOf(events.findLast((event) => event.type === "agent.message"))).toBe("Back again.");
  });

  it("finishes the session on the other worker when the one holding the wake is killed mid model call", async () => {
    platform.fake.enqueue({ text: "slow answer", delayMs: 4_000 }, { text: "Recovered answer." });
    const id = await session(await agent());
    await send(id, say("survive this"));
    await platform.waitForEvent(id, (event) => event.type === "span.model_request_start");
    const worker = await platform.wakeWorker(id);
    const victim = platform.app(worker);
    victim.kill("SIGKILL");
    await victim.exited;
    await platform.waitForIdle(id, "end_turn", 0, 30_000);
    const events = await platform.events(id);
    expectWellFormed(events);
    expect(types(events)).toContain("session.status_rescheduled");
    const messages = events.filter((event) => event.type === "agent.message");
    expect(messages).toHaveLength(1);
    expect(textOf(messages[0])).toBe("Recovered answer.");
    await platform.startWorker(worker);
  });
});
