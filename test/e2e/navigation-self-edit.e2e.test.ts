import type { SessionEvent } from "@wakeloop/contracts";
import { createClient } from "@wakeloop/sdk";
import { Platform, toolResults } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #10 self-edit and issue #11 navigation through the running services: an agent edits its own
// prompt and its next wake runs with it; the owner diffs and rolls the edit back through the API; the
// navigation tools read this agent's sessions and find nothing of another agent or tenant.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function agent(system: string): Promise<string> {
  const created = await platform.request("POST", "/v1/agents", {
    name: "navigator",
    model: platform.fakeModel(),
    system,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

async function session(agentId: string): Promise<string> {
  const created = await platform.request("POST", "/v1/sessions", { agent: agentId });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

/** Sends a message and waits for the turn to end; the events of that turn. */
async function turn(sessionId: string, text: string): Promise<SessionEvent[]> {
  const before = (await platform.events(sessionId)).at(-1)?.seq ?? 0;
  const sent = await platform.request("POST", `/v1/sessions/${sessionId}/events`, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  await platform.waitForIdle(sessionId, "end_turn", before, 60_000);
  return (await platform.events(sessionId)).filter((event) => event.seq > before);
}

/**
 * The agent's own part of the system prompt the fake model received in its request number `index`
 * (OpenAI wire format): what precedes the sections the harness adds (how to state a learning).
 */
function systemOf(index: number): string {
  const body = platform.fake.requests[index]?.body as {
    messages?: Array<{ role: string; content: unknown }>;
  };
  const system = body.messages?.find((message) => message.role === "system");
  const text = typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
  return text.split("\n\n## Learnings\n")[0] ?? text;
}

describe("self-edit", () => {
  it("an edit makes a new agent version that the session's next wake runs with; the owner rolls it back", async () => {
    const agentId = await agent("You are terse.");
    const id = await session(agentId);
    const first = platform.fake.requests.length;
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "edit_system_prompt", input: { operation: "append", content: "Answer in French." } },
        ],
      },
      { toolCalls: [{ name: "read_system_prompt", input: {} }] },
      { text: "edited" },
    );
    const edited = toolResults(await turn(id, "remember: French from now on"));
    expect(edited).toEqual([
      {
        name: "edit_system_prompt",
        isError: false,
        value: { version: 2, changed: true, applies_from: "next_wake" },
      },
      {
        name: "read_system_prompt",
        isError: false,
        value: { prompt: "You are terse.\nAnswer in French.", version: 2 },
      },
    ]);
    // The wake that made the edit kept its prompt to the end.
    for (let index = first; index < platform.fake.requests.length; index++) {
      expect(systemOf(index)).toBe("You are terse.");
    }
    expect((await platform.request("GET", `/v1/sessions/${id}`)).body.agent).toEqual({
      id: agentId,
      version: 2,
    });

    // The next wake runs with the edited prompt.
    const next = platform.fake.requests.length;
    platform.fake.enqueue({ text: "bonjour" });
    await turn(id, "hello");
    expect(systemOf(next)).toBe("You are terse.\nAnswer in French.");

    // A failed edit is a clear tool error and makes no version.
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "edit_system_prompt", input: { operation: "delete", content: "Answer in German." } },
        ],
      },
      { text: "could not" },
    );
    const [failed] = toolResults(await turn(id, "drop the German rule"));
    expect(failed).toMatchObject({ name: "edit_system_prompt", isError: true });
    expect(String(failed?.value)).toContain("is not in the system prompt");

    // The owner sees the edit as a diff and rolls it back, moving the session back too.
    const client = createClient({ baseUrl: platform.baseUrl, apiKey: platform.apiKey });
    const diff = await client.agents.diff(agentId, { from: 1, to: 2 });
    expect(diff.system_diff).toContain("+Answer in French.");
    const rolled = await client.agents.rollback(agentId, 1, { apply_to_sessions: true });
    expect(rolled).toMatchObject({ version: 3, system: "You are terse." });
    expect((await platform.request("GET", `/v1/sessions/${id}`)).body.agent.version).toBe(3);
    const after = platform.fake.requests.length;
    platform.fake.enqueue({ text: "hi" });
    await turn(id, "hello again");
    expect(systemOf(after)).toBe("You are terse.");
  });
});

describe("navigation", () => {
  it("reads this agent's sessions, bounded, and finds nothing of another agent or tenant", async () => {
    const agentId = await agent("You navigate.");
    const earlier = await session(agentId);
    platform.fake.enqueue(
      { toolCalls: [{ name: "list_state_keys", input: {} }] },
      { text: "earlier work done" },
    );
    await turn(earlier, "do some work");

    const strangerAgent = await agent("Someone else.");
    const strangers = await session(strangerAgent);
    const other = await platform.createTenant("elsewhere");
    const foreign = await fetch(`${platform.baseUrl}/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "foreign", model: platform.fakeModel() }),
    }).then((response) => response.json() as Promise<{ id: string }>);
    const foreignSession = await fetch(`${platform.baseUrl}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ agent: foreign.id }),
    }).then((response) => response.json() as Promise<{ id: string }>);

    const current = await session(agentId);
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "session_list", input: {} },
          { name: "session_get_snapshot", input: { session_id: earlier } },
          { name: "session_get_events", input: { session_id: earlier, limit: 3 } },
          { name: "session_get_trace", input: { session_id: earlier } },
          { name: "session_describe_context", input: {} },
          { name: "agent_describe_setup", input: { session_id: earlier } },
          { name: "agent_compare_setup", input: { session_id: earlier } },
          { name: "session_list_children", input: {} },
        ],
      },
      {
        toolCalls: [
          { name: "session_get_snapshot", input: { session_id: strangers } },
          { name: "session_get_events", input: { session_id: foreignSession.id } },
          { name: "agent_compare_setup", input: { session_id: strangers } },
        ],
      },
      { text: "looked around" },
    );
    const all = toolResults(await turn(current, "what did I do before?"));
    // The first request's eight reads, then the three that name sessions this agent does not own.
    const byName = new Map(all.slice(0, 8).map((r) => [r.name, r]));
    const value = (name: string) => {
      const result = byName.get(name);
      expect(result?.isError, `${name}: ${JSON.stringify(result?.value)}`).toBe(false);
      return result?.value;
    };

    const listed = value("session_list").sessions as Array<{ id: string; relation_to_current: string }>;
    expect(listed.map((s) => s.id).sort()).toEqual([earlier, current].sort());
    expect(listed.find((s) => s.id === current)?.relation_to_current).toBe("self");

    expect(value("session_get_snapshot")).toMatchObject({
      id: earlier,
      status: "idle",
      stop_reason: "end_turn",
      relation_to_current: "same_agent",
      setup_matches_current: true,
      last_agent_message: "earlier work done",
    });
    const events = value("session_get_events");
    expect(events.events.map((event: SessionEvent) => event.seq)).toEqual([1, 2, 3]);
    expect(events.next_after_seq).toBe(3);

    const trace = value("session_get_trace");
    expect(trace.wake_id).toEqual(expect.any(String));
    expect(trace.wake).toMatchObject({ status: "completed" });

    expect(value("session_describe_context")).toMatchObject({
      session_id: current,
      estimated: false,
      pressure: { level: "low" },
    });
    expect(value("agent_describe_setup")).toMatchObject({
      session_id: earlier,
      agent_setup_fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
      setup_matches_current: true,
    });
    expect(value("agent_compare_setup")).toMatchObject({ matches: true, changed_sections: [] });
    expect(value("session_list_children")).toMatchObject({ parent_session_id: current, children: [] });

    // Another agent's session (same tenant) and another tenant's session are simply not found.
    const refused = all.slice(8);
    expect(refused.map((r) => [r.name, r.isError])).toEqual([
      ["session_get_snapshot", true],
      ["session_get_events", true],
      ["agent_compare_setup", true],
    ]);
    for (const result of refused) expect(String(result.value)).toMatch(/is not a session of this agent$/);
  });
});
