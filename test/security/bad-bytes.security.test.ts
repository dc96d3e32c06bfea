import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8 point 9: bad bytes never wedge a session. A NUL or a lone surrogate from a client is a 400;
// from a model or a tool it is replaced (U+FFFD) before the append, because Postgres refuses to store
// it and a wake whose every append fails would be retried, and fail, forever.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    env: { LEASE_SWEEP_INTERVAL_MS: "200", WAKE_REPUBLISH_AFTER_MS: "2000" },
    workerEnv: { MODEL_RETRY_BASE_MS: "20", MODEL_RETRY_MAX_MS: "50" },
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function newSession(): Promise<string> {
  const agent = await platform.request("POST", "/v1/agents", { name: "bytes", model: platform.fakeModel() });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const session = await platform.request("POST", "/v1/sessions", { agent: agent.body.id });
  expect(session.status, JSON.stringify(session.body)).toBe(200);
  return session.body.id as string;
}

const say = (text: string) => ({ events: [{ type: "user.message", content: [{ type: "text", text }] }] });
const textOf = (event: SessionEvent | undefined) =>
  event && "content" in event
    ? event.content.map((block) => ("text" in block ? block.text : "")).join("")
    : "";

describe("bad bytes from a client", () => {
  it("are a 400 in a path id, a query string and a message, never a 500", async () => {
    const id = await newSession();
    expect((await platform.request("GET", "/v1/agents/a%00b")).status).toBe(400);
    expect((await platform.request("GET", `/v1/sessions/${id}/events?after_seq=1%00`)).status).toBe(400);
    expect((await platform.request("GET", "/v1/sessions?agent_id=x%00y")).status).toBe(400);
    const nul = '{"events":[{"type":"user.message","content":[{"type":"text","text":"a\\u0000b"}]}]}';
    expect((await platform.request("POST", `/v1/sessions/${id}/events`, nul)).status).toBe(400);
    const surrogate = '{"events":[{"type":"user.message","content":[{"type":"text","text":"a\\udc00b"}]}]}';
    expect((await platform.request("POST", `/v1/sessions/${id}/events`, surrogate)).status).toBe(400);
    expect(await platform.events(id)).toEqual([]);
  });
});

describe("bad bytes from the model and its tools", () => {
  it("are replaced before the append, so the session finishes its turn and takes the next one", async () => {
    platform.fake.enqueue(
      {
        text: "Saving\u0000.",
        toolCalls: [{ name: "set_state", input: { key: "note", value: "a\u0000b\uD800c" } }],
      },
      { toolCalls: [{ name: "get_state", input: { key: "note" } }] },
      { text: "Stored." },
      { text: "Still here." },
    );
    const id = await newSession();
    expect((await platform.request("POST", `/v1/sessions/${id}/events`, say("save it"))).status).toBe(202);
    await platform.waitForIdle(id, "end_turn", 0, 90_000);

    const events = await platform.events(id);
    const toolUses = events.filter((event) => event.type === "agent.tool_use");
    expect(toolUses[0]).toMatchObject({
      name: "set_state",
      input: { key: "note", value: "a\uFFFDb\uFFFDc" },
    });
    const results = events.filter((event) => event.type === "agent.tool_result");
    expect(results.map((event) => event.is_error)).toEqual([false, false]);
    // What the tool stored is what the session recorded.
    expect(textOf(results[1])).toContain(JSON.stringify("a\uFFFDb\uFFFDc"));
    expect(events.filter((event) => event.type === "agent.message").map(textOf)).toEqual([
      "Saving\uFFFD.",
      "Stored.",
    ]);
    expect(events.some((event) => event.type === "session.error")).toBe(false);

    const last = events.at(-1)?.seq ?? 0;
    expect((await platform.request("POST", `/v1/sessions/${id}/events`, say("still there?"))).status).toBe(
      202,
    );
    await platform.waitForIdle(id, "end_turn", last, 60_000);
    expect(textOf((await platform.events(id)).findLast((event) => event.type === "agent.message"))).toBe(
      "Still here.",
    );
  }, 180_000);
});
