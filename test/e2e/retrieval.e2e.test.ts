import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Retrieval through the services (issue #10): a message committed in session A reaches the search index
// through the events stream (memory-retrieval's durable consumer) and is found by session B of the same
// agent with retrieval_search; another agent or tenant finds nothing.

let platform: Platform;
const search = [{ name: "retrieval_search", input: { query: "canary rollout payments" } }];

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** One turn of a new session of `agentId`: the user says `text`, the model searches, then ends. */
function searchTurn(agentId: string, text: string) {
  platform.fake.enqueue({ toolCalls: search }, { text: "done" });
  return platform.runTurn(agentId, text);
}

/** The hits of the turn's one retrieval_search call. */
function hits(list: SessionEvent[]): Array<Record<string, unknown>> {
  const result = list.find((event) => event.type === "agent.tool_result");
  if (result?.type !== "agent.tool_result") throw new Error("the turn has no tool result");
  expect(result.is_error, JSON.stringify(result.content)).toBe(false);
  const text = result.content.map((block) => ("text" in block ? block.text : "")).join("");
  return JSON.parse(text).hits;
}

describe("retrieval through the services", () => {
  let shared: string;
  let sessionA: string;

  it("session B of the same agent finds a message of session A within seconds", async () => {
    shared = await platform.createAgent({ name: "retrieval e2e" });
    platform.fake.enqueue({ text: "noted" });
    const a = await platform.runTurn(
      shared,
      "The canary rollout of payments-api failed on the readiness probe",
    );
    sessionA = a.id;
    const said = a.events.find((event) => event.type === "user.message");
    const b = await searchTurn(shared, "what happened to the payments rollout?");
    expect(hits(b.events)).toEqual([
      expect.objectContaining({
        source: "session_event",
        session_id: sessionA,
        event_id: said?.id,
        type: "user.message",
        snippet: expect.stringContaining("<b>canary</b>"),
        next_step: expect.objectContaining({ tool: "session_get_events" }),
      }),
    ]);
    // Found by the first search of B, which ran seconds after A's message committed.
    const searched = b.events.find((event) => event.type === "agent.tool_result");
    expect(Date.parse(searched?.created_at ?? "") - Date.parse(said?.created_at ?? "")).toBeLessThan(15_000);
  }, 90_000);

  it("another agent and another tenant find nothing", async () => {
    expect(hits((await searchTurn(await platform.createAgent(), "look")).events)).toEqual([]);
    // Another tenant's agent, session and turn, through the API with that tenant's key.
    const other = await platform.createTenant("retrieval other");
    const auth = { authorization: `Bearer ${other.apiKey}` };
    const spec = { name: "other", model: platform.fakeModel(), system: "You are a test agent." };
    const agentId = (await platform.request("POST", "/v1/agents", spec, auth)).body.id as string;
    const session = (await platform.request("POST", "/v1/sessions", { agent: agentId }, auth)).body
      .id as string;
    platform.fake.enqueue({ toolCalls: search }, { text: "done" });
    const say = { events: [{ type: "user.message", content: [{ type: "text", text: "look" }] }] };
    expect((await platform.request("POST", `/v1/sessions/${session}/events`, say, auth)).status).toBe(202);
    let theirs: SessionEvent[] = [];
    await expect
      .poll(
        async () => {
          const page = await platform.request(
            "GET",
            `/v1/sessions/${session}/events?limit=1000`,
            undefined,
            auth,
          );
          theirs = page.body.data as SessionEvent[];
          return theirs.some((event) => event.type === "session.status_idle");
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    expect(hits(theirs)).toEqual([]);
  }, 90_000);
});
