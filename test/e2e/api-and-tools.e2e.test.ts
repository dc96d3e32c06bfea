import type { SessionEvent } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The public API's edges and the tool runtime through the running services: bad input, tenant
// isolation, stream reconnects, policy exclusions the model never sees, and loop detection.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function newSession(spec: Record<string, unknown> = {}): Promise<string> {
  const agent = await platform.request("POST", "/v1/agents", {
    name: "tools",
    model: platform.fakeModel(),
    ...spec,
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const session = await platform.request("POST", "/v1/sessions", { agent: agent.body.id });
  expect(session.status).toBe(200);
  return session.body.id as string;
}

const say = (text: string) => ({ events: [{ type: "user.message", content: [{ type: "text", text }] }] });

describe("API edges", () => {
  it("answers malformed and oversized bodies with a 4xx and details, never a 500", async () => {
    const id = await newSession();
    const malformed = await platform.request("POST", `/v1/sessions/${id}/events`, "{not json");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.type).toBe("invalid_request_error");

    const invalid = await platform.request("POST", `/v1/sessions/${id}/events`, {
      events: [{ type: "user.message", content: [] }],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: expect.any(Array), message: expect.any(String) }),
      ]),
    );

    const huge = await platform.request("POST", `/v1/sessions/${id}/events`, say("x".repeat(2_000_000)));
    expect(huge.status).toBe(413);
    expect(huge.body.error.type).toBe("payload_too_large_error");

    // Nothing was appended by any of them.
    expect(await platform.events(id)).toEqual([]);
  });

  it("hides another tenant's sessions behind a 404", async () => {
    const id = await newSession();
    const other = await platform.createTenant("other");
    const stranger = createClient({ baseUrl: platform.baseUrl, apiKey: other.apiKey });
    await expect(stranger.sessions.get(id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.events.list(id)).rejects.toMatchObject({ status: 404 });
    await expect(
      stranger.events.send(id, [{ type: "user.message", content: [{ type: "text", text: "hijack" }] }]),
    ).rejects.toMatchObject({ status: 404 });
    expect(await platform.events(id)).toEqual([]);
    const forged = createClient({ baseUrl: platform.baseUrl, apiKey: "wl_not-a-real-key" });
    await expect(forged.sessions.get(id)).rejects.toMatchObject({ status: 401 });
  });

  it("replays a dropped event stream from Last-Event-ID without missing anything", async () => {
    platform.fake.enqueue({ toolCalls: [{ name: "list_state_keys", input: {} }] }, { text: "first done" });
    const id = await newSession();
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    await client.events.send(id, [{ type: "user.message", content: [{ type: "text", text: "one" }] }]);

    // Read the first three events, then drop the connection.
    const seen: SessionEvent[] = [];
    const first = new AbortController();
    for await (const event of client.events.stream(id, { signal: first.signal })) {
      seen.push(event);
      if (seen.length === 3) break;
    }
    first.abort();
    await platform.waitForIdle(id, "end_turn");
    platform.fake.enqueue({ text: "second done" });
    await client.events.send(id, [{ type: "user.message", content: [{ type: "text", text: "two" }] }]);

    // Reconnect after the last seen seq: the rest, then live events until the second turn ends.
    const second = new AbortController();
    let idles = 0;
    for await (const event of client.events.stream(id, {
      afterSeq: seen.at(-1)?.seq ?? 0,
      signal: second.signal,
    })) {
      seen.push(event);
      if (event.type === "session.status_idle" && ++idles === 2) break;
    }
    second.abort();
    const stored = await platform.events(id);
    expect(seen.map((event) => event.seq)).toEqual(stored.map((event) => event.seq));
    expect(seen.map((event) => event.id)).toEqual(stored.map((event) => event.id));
  });
});

describe("traces", () => {
  it("records a wake as one trace: invoke_agent with chat and execute_tool children", async () => {
    platform.fake.enqueue({ toolCalls: [{ name: "list_state_keys", input: {} }] }, { text: "traced" });
    const id = await newSession();
    await platform.request("POST", `/v1/sessions/${id}/events`, say("trace me"));
    await platform.waitForIdle(id, "end_turn");
    type Span = { name: string; attributes: Record<string, unknown>; children: Span[] };
    // Spans reach Postgres through a batch exporter: poll until the whole tree is there.
    let root: Span | undefined;
    await expect
      .poll(
        async () => {
          const trace = await platform.request("GET", `/v1/sessions/${id}/trace`);
          root = trace.body.data?.[0]?.spans?.[0] as Span | undefined;
          return root?.children.map((child) => child.name).sort();
        },
        { timeout: 10_000 },
      )
      // "memory context": the wake's readiness check and skills index from the memory service. This
      // agent has nothing recallable, so the wake sends no recall request (no "memory recall" span).
      .toEqual(["chat fake-gpt", "chat fake-gpt", "execute_tool list_state_keys", "memory context"]);
    expect(root?.name).toBe("invoke_agent tools");
    expect(root?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": id,
    });
    const tool = root?.children.find((child) => child.name.startsWith("execute_tool"));
    const toolUse = (await platform.events(id)).find((event) => event.type === "agent.tool_use");
    expect(tool?.attributes).toMatchObject({
      "gen_ai.tool.name": "list_state_keys",
      "gen_ai.tool.call.id": toolUse?.id,
    });
    const traceIds = new Set(
      (await platform.events(id)).filter((event) => event.wake_id).map((event) => event.trace_id),
    );
    expect(traceIds.size).toBe(1);
  });
});

describe("tool runtime through the services", () => {
  it("never offers a denied tool to the model and explains the exclusion", async () => {
    platform.fake.enqueue({ text: "fine" });
    const before = platform.fake.requests.length;
    const id = await newSession({ tool_policy: { deny: ["set_state", "delete_*"] } });
    const tools = await platform.request("GET", `/v1/sessions/${id}/tools`);
    expect(tools.status).toBe(200);
    const offered = (tools.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(offered).toContain("get_state");
    expect(offered).not.toContain("set_state");
    expect(tools.body.excluded).toEqual(
      expect.arrayContaining([expect.objectContaining({ tool: "set_state", step: "agent" })]),
    );
    await platform.request("POST", `/v1/sessions/${id}/events`, say("hi"));
    await platform.waitForIdle(id, "end_turn");
    const body = platform.fake.requests[before]?.body as { tools?: Array<{ function: { name: string } }> };
    const sent = (body.tools ?? []).map((tool) => tool.function.name);
    expect(sent).toEqual((tools.body.offered as Array<{ tool: string }>).map((entry) => entry.tool));
    expect(sent).not.toContain("delete_state");
  });

  it("rejects a policy naming an unknown tool when the agent is saved", async () => {
    const response = await platform.request("POST", "/v1/agents", {
      name: "bad",
      model: platform.fakeModel(),
      tool_policy: { deny: ["rm_rf_everything"] },
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain("get_state");
  });

  it("warns, blocks and finally stops a looping model", async () => {
    platform.fake.setScript({ defaultTurn: { toolCalls: [{ name: "get_state", input: { key: "same" } }] } });
    const id = await newSession({ loop_detection: { window: 10, warn_at: 2, block_at: 3, stop_at: 4 } });
    await platform.request("POST", `/v1/sessions/${id}/events`, say("loop"));
    await platform.waitForIdle(id, "end_turn");
    platform.fake.setScript({});
    const events = await platform.events(id);
    const results = events.filter((event) => event.type === "agent.tool_result");
    const texts = results.map((event) => JSON.stringify(event.type === "agent.tool_result" && event.content));
    expect(texts.some((text) => text.includes("Loop warning"))).toBe(true);
    expect(texts.some((text) => text.includes("Blocked by loop detection"))).toBe(true);
    expect(events.find((event) => event.type === "session.error")).toMatchObject({
      error: { type: "loop_detected", retry_status: { type: "terminal" } },
    });
    expect(events.at(-1)).toMatchObject({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
    // The stop is captured once as a durable learning of the agent (`learning_list` reads the store),
    // after the wake's end commits, so it may land a moment after the session idles.
    const session = await platform.request("GET", `/v1/sessions/${id}`);
    const learnings = () =>
      platform
        .request("GET", `/v1/agents/${session.body.agent.id}/memory/learnings/entries`)
        .then((response) => response.body.data);
    await expect.poll(learnings, { timeout: 10_000 }).toEqual([
      expect.objectContaining({
        content: expect.stringContaining("loop detection"),
        metadata: { session_id: id, wake_id: expect.any(String) },
      }),
    ]);
  });
});
