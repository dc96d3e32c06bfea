import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Context assembly recalls (issue #10): at wake start the harness asks the memory service for the
// entries matching the new input and puts them in the system context, with an event saying so.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function agent(): Promise<string> {
  const created = await platform.request("POST", "/v1/agents", {
    name: "recall e2e",
    model: platform.fakeModel(),
    system: "You are a test agent.",
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

type Reply = { text: string } | { toolCalls: Array<{ name: string; input: Record<string, unknown> }> };

/** Runs one turn of a new session of `agentId` on `text` with the model's scripted replies. */
async function turn(
  agentId: string,
  text: string,
  replies: Reply[] = [{ text: "done" }],
): Promise<{ events: SessionEvent[]; firstRequest: string }> {
  platform.fake.enqueue(...replies);
  const before = platform.fake.requests.length;
  const created = await platform.request("POST", "/v1/sessions", { agent: agentId });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  const say = { events: [{ type: "user.message", content: [{ type: "text", text }] }] };
  expect((await platform.request("POST", `/v1/sessions/${id}/events`, say)).status).toBe(202);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const page = await platform.request("GET", `/v1/sessions/${id}/events?limit=1000`);
    const events = page.body.data as SessionEvent[];
    if (events.some((event) => event.type === "session.status_idle"))
      return { events, firstRequest: JSON.stringify(platform.fake.requests[before]?.body) };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`session ${id} did not go idle`);
}

const NOTE = "The staging database password rotates every Monday; fetch it from vault path ops/staging.";

describe("recall at wake start", () => {
  it("puts session A's note in session B's history after its question and records what was recalled", async () => {
    const shared = await agent();
    const a = await turn(shared, "remember this", [
      { toolCalls: [{ name: "memory_write", input: { target: "staging.md", content: NOTE } }] },
      { text: "done" },
    ]);
    expect(a.events.some((event) => event.type === "agent.tool_result" && !event.is_error)).toBe(true);
    // A's own first request had nothing to recall yet.
    expect(a.events.some((event) => event.type === "session.memory_recalled")).toBe(false);

    const b = await turn(shared, "How do I get the staging database password?");
    expect(b.firstRequest).toContain("## Recalled memory");
    expect(b.firstRequest).toContain("### workspace_memory_notes/staging.md");
    expect(b.firstRequest).toContain("vault path ops/staging");
    // Not in the system prompt, which stays the same from wake to wake: after the question it answers.
    const body = JSON.parse(b.firstRequest) as { messages: { role: string; content: unknown }[] };
    const roles = body.messages.map((message) => [message.role, JSON.stringify(message.content)]);
    const question = roles.findIndex(([, content]) => content?.includes("staging database password"));
    const recalledAt = roles.findIndex(([, content]) => content?.includes("## Recalled memory"));
    expect(roles[0]?.[0]).toBe("system");
    expect(roles[0]?.[1]).not.toContain("## Recalled memory");
    expect(recalledAt).toBe(question + 1);
    expect(roles[recalledAt]?.[0]).toBe("user");

    const recalled = b.events.filter((event) => event.type === "session.memory_recalled");
    const message = b.events.find((event) => event.type === "user.message");
    expect(recalled).toEqual([
      expect.objectContaining({
        message_ids: [message?.id],
        budget_tokens: 1_000,
        hits: [
          expect.objectContaining({
            store: "workspace_memory_notes",
            target: "staging.md",
            truncated: false,
          }),
        ],
        dropped: 0,
      }),
    ]);
    // Recorded before the model request that saw it.
    const start = b.events.find((event) => event.type === "span.model_request_start");
    expect(recalled[0]?.seq).toBeLessThan(start?.seq ?? 0);
  }, 90_000);

  it("captures the model's learning directives once each, listed by learning_list", async () => {
    const learner = await agent();
    const lesson = "Run the migrations before the seed script, or the seed fails on missing tables.";
    const first = await turn(learner, "the seed script fails", [
      { text: `Fixed it.\n<learning>${lesson}</learning>` },
    ]);
    // The system prompt tells the model how to state one, whatever tools are offered.
    expect(first.firstRequest).toContain("inside <learning>");
    // Stated again in another session: still one learning.
    await turn(learner, "seed again", [{ text: `<learning>${lesson}</learning>` }]);
    const listed = await turn(learner, "what did you learn", [
      { toolCalls: [{ name: "learning_list", input: {} }] },
      { text: "done" },
    ]);
    const result = listed.events.find((event) => event.type === "agent.tool_result");
    expect(result?.type === "agent.tool_result" && result.is_error).toBe(false);
    const body = JSON.parse(
      result?.type === "agent.tool_result" ? (result.content[0] as { text: string }).text : "{}",
    );
    expect(body.learnings).toEqual([
      expect.objectContaining({ key: expect.stringMatching(/^directive:/), text: lesson }),
    ]);
  }, 90_000);

  it("recalls nothing of another agent's memory", async () => {
    const other = await turn(await agent(), "How do I get the staging database password?");
    expect(other.firstRequest).not.toContain("## Recalled memory");
    expect(other.events.some((event) => event.type === "session.memory_recalled")).toBe(false);
  }, 60_000);
});
