import type { SessionEvent } from "@wakeloop/contracts";
import { Platform } from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Retrieval ranking through the services (issue #10), with memory-retrieval embedding through the fake
// model server's /v1/embeddings: a paraphrase full text misses is found by hybrid search, the setup
// prior puts a same-setup session above a newer one of another setup (which recommends comparing
// setups first), the spans of a wake's tool calls are found by session_search_traces, and memory_search
// and the wake-start recall rank by the same hybrid search.

let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({ workers: 1, embeddings: true });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** The parsed result of the turn's one tool call. */
function resultOf(list: SessionEvent[]): Record<string, unknown> {
  const result = list.find((event) => event.type === "agent.tool_result");
  if (result?.type !== "agent.tool_result") throw new Error("the turn has no tool result");
  expect(result.is_error, JSON.stringify(result.content)).toBe(false);
  return JSON.parse(result.content.map((block) => ("text" in block ? block.text : "")).join(""));
}

/** Until memory-retrieval's embedder has stored the vector of this event. */
async function embedded(eventId: string): Promise<void> {
  await expect
    .poll(
      async () =>
        (
          await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM retrieval_embeddings WHERE ref = ${eventId}`.execute(platform.db)
        ).rows[0]?.n,
      { timeout: 20_000 },
    )
    .toBe(1);
}

const userMessage = (events: SessionEvent[]) => events.find((event) => event.type === "user.message");

describe("retrieval ranking through the services", () => {
  it("finds a paraphrase that full text misses, by its embedding", async () => {
    const agent = await platform.createAgent({ name: "hybrid e2e" });
    platform.fake.enqueue({ text: "noted" });
    const a = await platform.runTurn(agent, "The staging database password rotates every Monday at six");
    await embedded(userMessage(a.events)?.id ?? "");
    const query = "how often is the staging password rotated";
    platform.fake.enqueue({ toolCalls: [{ name: "retrieval_search", input: { query } }] }, { text: "done" });
    const b = await platform.runTurn(agent, "remind me about staging credentials");
    const found = resultOf(b.events);
    expect(found.ranking).toBe("hybrid");
    expect(found.hits).toEqual([
      expect.objectContaining({
        source: "session_event",
        session_id: a.id,
        event_id: userMessage(a.events)?.id,
        // Found by the semantic list only: every word of the websearch query must match for full text.
        ranking: expect.objectContaining({ lists: [{ list: "semantic", rank: 1 }] }),
        why: expect.stringMatching(/^semantic similarity 0\.\d{3} \(#1\)/),
        next_step: expect.objectContaining({ tool: "session_get_events" }),
      }),
    ]);
  }, 120_000);

  it("recalls a note by meaning at wake start, and memory_search finds it by meaning", async () => {
    const agent = await platform.createAgent({ name: "hybrid recall e2e" });
    const note = "QA signs off on UI changes.";
    platform.fake.enqueue(
      { toolCalls: [{ name: "memory_write", input: { target: "qa.md", content: note } }] },
      { text: "noted" },
    );
    await platform.runTurn(agent, "remember who approves interface work");
    await expect
      .poll(
        async () =>
          (
            await sql<{ n: number }>`SELECT count(*)::int AS n FROM retrieval_embeddings
              WHERE agent_id = ${agent} AND ref = 'workspace_memory_notes' AND target = 'qa.md'`.execute(
              platform.db,
            )
          ).rows[0]?.n,
        { timeout: 20_000 },
      )
      .toBe(1);
    // Recall searches the words of three letters or more ("who", "does"): only the vector finds the note.
    const query = "who signs off QA for the UI redesign";
    platform.fake.enqueue({ toolCalls: [{ name: "memory_search", input: { query } }] }, { text: "done" });
    const before = platform.fake.requests.length;
    const b = await platform.runTurn(agent, "Who does QA for UI?");
    // The turn's first model request (the embedder's requests to the same server are not model requests).
    const first = platform.fake.requests.slice(before).find((request) => request.protocol !== null);
    expect(JSON.stringify(first?.body)).toContain("### workspace_memory_notes/qa.md");
    expect(b.events.find((event) => event.type === "session.memory_recalled")).toMatchObject({
      hits: [expect.objectContaining({ store: "workspace_memory_notes", target: "qa.md" })],
    });
    const found = resultOf(b.events);
    expect(found.ranking).toBe("hybrid");
    expect(found.hits).toEqual([
      expect.objectContaining({
        source: "memory",
        target: "qa.md",
        // "redesign" is in no entry, and full text needs every word.
        ranking: expect.objectContaining({ lists: [{ list: "semantic", rank: 1 }] }),
        next_step: { tool: "memory_read", input: { store: "workspace_memory_notes", target: "qa.md" } },
      }),
    ]);
  }, 120_000);

  it("ranks a same-setup session above a newer one of another setup", async () => {
    const agent = await platform.createAgent({ name: "priors e2e", system: "You are a test agent." });
    // The searching session is pinned to version 1 before the agent changes.
    const current = (await platform.request("POST", "/v1/sessions", { agent })).body.id as string;
    const text = "the quarterly ledger reconciliation checklist lives in the finance wiki";
    platform.fake.enqueue({ text: "noted" });
    const older = await platform.runTurn(agent, text);
    const revised = await platform.request("POST", `/v1/agents/${agent}`, {
      system: "You are a changed agent.",
    });
    expect(revised.status).toBe(200);
    platform.fake.enqueue({ text: "noted" });
    const newer = await platform.runTurn(agent, text);
    platform.fake.enqueue(
      {
        toolCalls: [{ name: "session_search_context", input: { query: "ledger reconciliation checklist" } }],
      },
      { text: "done" },
    );
    await waitSearchable(agent, newer.id);
    const said = await platform.request("POST", `/v1/sessions/${current}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "where is the checklist?" }] }],
    });
    expect(said.status).toBe(202);
    await platform.waitForIdle(current, "end_turn", 0, 60_000);
    const hits = resultOf(await platform.events(current)).hits as Array<Record<string, unknown>>;
    // Full text alone ranks the newer one first (equal text, newest first): the setup prior turns it.
    expect(hits.map((hit) => hit.session_id)).toEqual([older.id, newer.id]);
    expect(hits[0]).toMatchObject({
      setup_matches_current: true,
      why: expect.stringMatching(/same agent setup \w+ \+20%$/),
      next_step: { tool: "session_get_events" },
    });
    expect(hits[1]).toMatchObject({
      setup_matches_current: false,
      next_step: { tool: "agent_compare_setup", input: { session_id: newer.id } },
      after_that: expect.objectContaining({ tool: "session_get_events" }),
    });
  }, 120_000);

  it("finds the spans of a wake's tool calls, with their names, errors and durations", async () => {
    const agent = await platform.createAgent({ name: "traces e2e" });
    // A tool call that fails: reading a memory entry that does not exist.
    platform.fake.enqueue(
      { toolCalls: [{ name: "memory_read", input: { target: "missing-runbook.md" } }] },
      { text: "it is missing" },
    );
    const failed = await platform.runTurn(agent, "read the runbook");
    await expect
      .poll(
        async () =>
          (
            await sql<{ n: number }>`SELECT count(*)::int AS n FROM spans
              WHERE session_id = ${failed.id} AND name = 'execute_tool memory_read'`.execute(platform.db)
          ).rows[0]?.n,
        { timeout: 20_000 },
      )
      .toBe(1);
    platform.fake.enqueue(
      { toolCalls: [{ name: "session_search_traces", input: { query: "memory_read error" } }] },
      { text: "done" },
    );
    const search = await platform.runTurn(agent, "which tool failed before?");
    const hits = resultOf(search.events).hits as Array<Record<string, unknown>>;
    expect(hits).toContainEqual(
      expect.objectContaining({
        source: "trace",
        session_id: failed.id,
        name: "execute_tool memory_read",
        status: "error",
        duration_ms: expect.any(Number),
        next_step: expect.objectContaining({ tool: "session_get_trace" }),
      }),
    );
    // The model call of that wake is found by its span name.
    platform.fake.enqueue(
      { toolCalls: [{ name: "session_search_traces", input: { query: "chat", session_id: failed.id } }] },
      { text: "done" },
    );
    const chats = resultOf((await platform.runTurn(agent, "and the model calls?")).events).hits as Array<
      Record<string, unknown>
    >;
    expect(chats.length).toBeGreaterThan(0);
    expect(chats.every((hit) => String(hit.name).startsWith("chat ") && hit.session_id === failed.id)).toBe(
      true,
    );
  }, 120_000);
});

/** Until the newer session's message is in the search index (its commit reaches the indexer through the bus). */
async function waitSearchable(agent: string, sessionId: string): Promise<void> {
  await expect
    .poll(
      async () =>
        (
          await sql<{ n: number }>`SELECT count(*)::int AS n FROM session_event_index
            WHERE agent_id = ${agent} AND session_id = ${sessionId}`.execute(platform.db)
        ).rows[0]?.n,
      { timeout: 20_000 },
    )
    .toBeGreaterThan(0);
}
