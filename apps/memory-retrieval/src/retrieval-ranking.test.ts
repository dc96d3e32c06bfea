import type { SessionEvent } from "@wakeloop/contracts";
import {
  createSession,
  defineOutcome,
  embeddingBacklog,
  indexSessionEvents,
  newId,
  writeMemory,
} from "@wakeloop/db";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedEnvironment,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMBED_MAX_ATTEMPTS, startEmbedder } from "./embedder";
import { createEmbeddingsClient, type EmbeddingsClient } from "./embeddings-client";
import { executeMemoryCall } from "./memory-server";
import { recallMemory } from "./recall";
import { FULL_TEXT_ONLY, type SearchSettings } from "./tool-call";
import { createVectorCache } from "./vector-cache";

// Against real Postgres and the fake model server's `/v1/embeddings` (a deterministic hashed bag of word
// stems): the background embedder fills the vectors, hybrid search finds what full text misses, and the
// ranking priors order equal full-text matches as docs/memory.md says.

let testDb: TestDatabase;
let fake: FakeModelServer;
let embeddings: EmbeddingsClient;
let embedder: { stop(): Promise<void> };
let agent: SeededAgent;
let current: string;
let hybrid: SearchSettings;
const limits = { maxEntryBytes: 4_096, maxStoreBytes: 65_536 };
let seq = 0;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 6 });
  fake = await startFakeModelServer();
  embeddings = createEmbeddingsClient({
    baseUrl: `${fake.url}/v1`,
    model: "fake-embed",
    apiKey: undefined,
    dimensions: undefined,
    timeoutMs: 5_000,
  });
  hybrid = { embeddings, vectorWindow: 1_000, minSimilarity: 0.25, vectorCache: createVectorCache(1 << 20) };
  embedder = await startEmbedder({
    db: testDb.appDb,
    log: createLogger({ service: "ranking-test", level: "silent" }),
    embeddings,
    batchSize: 16,
    pollMs: 20,
  });
  agent = await seedAgent(testDb.db);
  current = (await seedSession(testDb.db, agent)).id;
});

afterAll(async () => {
  await embedder?.stop();
  await fake?.close();
  await testDb?.drop();
});

function call(tool: string, input: unknown, search: SearchSettings, sessionId = current) {
  return executeMemoryCall(
    testDb.appDb,
    limits,
    {
      tenant_id: agent.tenantId,
      agent_id: agent.agentId,
      session_id: sessionId,
      wake_id: "wake_one",
      tool_call_id: newId("toolCall"),
      tool: tool as "retrieval_search",
      input,
    },
    search,
  );
}

const hitsOf = async (tool: string, input: unknown, search: SearchSettings) =>
  (await call(tool, input, search)).result.hits as Array<Record<string, unknown>>;

/** A skill created and embedded, and what `skills_search` answers for `query` with each setting. */
async function skillSearch(skill: { name: string; description: string; content: string }, query: string) {
  expect((await call("create_skill", skill, hybrid)).is_error).toBe(false);
  await embedded();
  return async (search: SearchSettings) =>
    (await call("skills_search", { query }, search)).result.skills as Array<Record<string, unknown>>;
}

async function index(sessionId: string, text: string, createdAt = new Date()): Promise<string> {
  const event: SessionEvent = {
    id: newId("event"),
    session_id: sessionId,
    seq: ++seq,
    processed_at: null,
    created_at: createdAt.toISOString(),
    type: "user.message",
    content: [{ type: "text", text }],
  };
  await indexSessionEvents(testDb.appDb, agent.tenantId, [event]);
  return event.id;
}

const note = (target: string, content: string) =>
  writeMemory(
    testDb.appDb,
    agent,
    {
      store: "workspace_memory_notes",
      target,
      content,
      author: { kind: "tool", session_id: current, wake_id: null, tool_call_id: null },
    },
    limits,
  );

/** Until the embedder has drained the queue (every indexed text has its vector). */
const embedded = () =>
  expect
    .poll(() => embeddingBacklog(testDb.db, EMBED_MAX_ATTEMPTS), { timeout: 15_000 })
    .toEqual({
      pending: 0,
      failed: 0,
    });

describe("hybrid retrieval", () => {
  it("finds a paraphrase full text misses, once the embedder has its vector", async () => {
    await note("staging.md", "The staging database password rotates every Monday at 06:00.");
    await note("lunch.md", "Team lunch is on Fridays at the noodle place.");
    const other = (await seedSession(testDb.db, agent)).id;
    await index(other, "The payments canary failed its readiness probe twice.");
    const query = { query: "how often is the staging password rotated", sources: ["memory", "sessions"] };
    // Every word of a websearch query must match: full text finds nothing.
    expect(await hitsOf("retrieval_search", query, FULL_TEXT_ONLY)).toEqual([]);
    await embedded();
    const response = await call("retrieval_search", query, hybrid);
    expect(response.result.ranking).toBe("hybrid");
    const hits = response.result.hits as Array<Record<string, unknown>>;
    expect(hits.map((hit) => hit.target)).toEqual(["staging.md"]);
    expect(hits[0]).toMatchObject({
      source: "memory",
      snippet: expect.stringContaining("password rotates"),
      why: expect.stringMatching(/^semantic similarity 0\.\d{3} \(#1\)/),
      ranking: { lists: [{ list: "semantic", rank: 1 }] },
      written_in_session: current,
      relation_to_current: "self",
      next_step: { tool: "memory_read", input: { store: "workspace_memory_notes", target: "staging.md" } },
    });
    // The event paraphrase too, and a hit both lists found ranks above one only full text found.
    const events = await hitsOf(
      "session_search_context",
      { query: "canary readiness probes keep failing repeatedly" },
      hybrid,
    );
    expect(events).toEqual([expect.objectContaining({ source: "session_event", session_id: other })]);
    expect(
      await hitsOf(
        "session_search_context",
        { query: "canary readiness probes keep failing repeatedly" },
        FULL_TEXT_ONLY,
      ),
    ).toEqual([]);
  });

  it("re-embeds a rewritten entry and never ranks a stale vector", async () => {
    const first = await note("oncall.md", "Escalate pager alerts to the platform rotation.");
    await embedded();
    await writeMemory(
      testDb.appDb,
      agent,
      {
        store: "workspace_memory_notes",
        target: "oncall.md",
        content: "Bake sourdough with a long cold proof.",
        expectedVersionId: first.id,
        author: { kind: "api", session_id: null, wake_id: null, tool_call_id: null, api_key_id: "key_x" },
      },
      limits,
    );
    // Before the new vector exists the old one is not used: no semantic hit for the old wording.
    const old = { query: "who gets paged for platform alerts escalation", sources: ["memory"] };
    await embedded();
    expect((await hitsOf("retrieval_search", old, hybrid)).map((hit) => hit.target)).not.toContain(
      "oncall.md",
    );
    const fresh = await hitsOf(
      "retrieval_search",
      { query: "baking bread proofing", sources: ["memory"] },
      hybrid,
    );
    expect(fresh.map((hit) => hit.target)).toEqual(["oncall.md"]);
    // Written by a person: no session, so no priors and no relation.
    expect(fresh[0]).not.toHaveProperty("relation_to_current");
  });

  it("keeps full text working while the endpoint fails, and embeds after its retries", async () => {
    fake.failEmbeddings(3);
    const other = (await seedSession(testDb.db, agent)).id;
    await index(other, "Rotate the TLS certificates of the ingress gateway before renewal day.");
    expect(
      (await hitsOf("session_search_context", { query: "TLS certificates ingress" }, hybrid)).map(
        (hit) => hit.session_id,
      ),
    ).toEqual([other]);
    await embedded();
    const paraphrase = await hitsOf(
      "session_search_context",
      { query: "renewing certificate for ingress tls soon" },
      hybrid,
    );
    expect(paraphrase.map((hit) => hit.session_id)).toEqual([other]);
  });

  it("answers with full text alone, saying why, when the query cannot be embedded", async () => {
    fake.failEmbeddings(1);
    const response = await call(
      "retrieval_search",
      { query: "staging password", sources: ["memory"] },
      hybrid,
    );
    expect(response.result).toMatchObject({
      ranking: "full_text",
      embeddings_error: expect.stringContaining("503"),
    });
    expect((response.result.hits as Array<{ target: string }>).map((hit) => hit.target)).toEqual([
      "staging.md",
    ]);
  });
});

describe("ranking priors", () => {
  it("orders equal full-text matches by child relation, setup, outcome, then the rest", async () => {
    await defineOutcome(
      testDb.appDb,
      { tenantId: agent.tenantId, sessionId: current },
      { title: "Ship the payments export", criteria: ["export runs nightly"], evaluatorPrompt: null },
    );
    const environment = await seedEnvironment(testDb.db, agent);
    const drifted = (await seedSession(testDb.db, agent, { environmentId: environment })).id;
    const sameOutcome = (await seedSession(testDb.db, agent, { environmentId: environment })).id;
    await defineOutcome(
      testDb.appDb,
      { tenantId: agent.tenantId, sessionId: sameOutcome },
      { title: "ship the payments EXPORT", criteria: [], evaluatorPrompt: null },
    );
    const sameSetup = (await seedSession(testDb.db, agent)).id;
    const child = (
      await createSession(testDb.db, {
        tenantId: agent.tenantId,
        agentId: agent.agentId,
        agentVersion: agent.agentVersion,
        environmentId: null,
        parentSessionId: current,
        title: null,
        metadata: {},
        budget: { max_total_tokens: null },
      })
    ).id;
    // The same text everywhere, so full text ties and orders them newest first: the reverse of the priors.
    const text = "quarterly ledger reconciliation checklist";
    const base = Date.now();
    for (const [order, session] of [child, sameSetup, sameOutcome, drifted].entries()) {
      await index(session, text, new Date(base + order * 1_000));
    }
    const hits = await hitsOf("session_search_context", { query: "ledger reconciliation" }, FULL_TEXT_ONLY);
    expect(hits.map((hit) => hit.session_id)).toEqual([child, sameSetup, sameOutcome, drifted]);
    expect(
      hits.map((hit) => (hit.ranking as { priors: Array<{ prior: string }> }).priors.map((p) => p.prior)),
    ).toEqual([["same_setup", "relation"], ["same_setup"], ["same_outcome"], []]);
    expect(hits[0]).toMatchObject({
      relation_to_current: "child",
      setup_matches_current: true,
      why: expect.stringMatching(
        /^full-text rank 0\.\d{3}; same agent setup \w+ \+20%, child session \+10%$/,
      ),
      next_step: { tool: "session_get_events", input: { session_id: child } },
    });
    expect(hits[2]?.why).toContain("same outcome title +15%");
    // A session of another setup: compare setups before rereading it.
    expect(hits[3]).toMatchObject({
      relation_to_current: "same_agent",
      setup_matches_current: false,
      next_step: { tool: "agent_compare_setup", input: { session_id: drifted } },
      after_that: { tool: "session_get_events", input: { session_id: drifted } },
    });
  });
});

describe("one engine for memory_search, skills_search and recall", () => {
  it("memory_search finds a paraphrase only the semantic list has", async () => {
    await note("vpn.md", "The VPN certificate renews every ninety days.");
    const input = { query: "how often does the vpn certificate get renewed" };
    // Every word must match in full text: "often" and "get" are not in the note.
    expect(await hitsOf("memory_search", input, FULL_TEXT_ONLY)).toEqual([]);
    await embedded();
    const response = await call("memory_search", input, hybrid);
    expect(response.result).toMatchObject({ query: input.query, ranking: "hybrid" });
    expect(response.result.hits).toEqual([
      expect.objectContaining({
        source: "memory",
        target: "vpn.md",
        why: expect.stringMatching(/^semantic similarity 0\.\d{3} \(#1\)/),
        next_step: { tool: "memory_read", input: { store: "workspace_memory_notes", target: "vpn.md" } },
      }),
    ]);
    // Stores narrow the semantic list too.
    expect(await hitsOf("memory_search", { ...input, stores: ["workspace_memory"] }, hybrid)).toEqual([]);
  });

  it("skills_search ranks enabled skills by the same hybrid search", async () => {
    const input = { query: "publishing tagged builds quickly" };
    const skillsOf = await skillSearch(
      { name: "cut-release", description: "Ship a version", content: "Tag the build and publish notes." },
      input.query,
    );
    expect(await skillsOf(FULL_TEXT_ONLY)).toEqual([]);
    expect(await skillsOf(hybrid)).toEqual([
      expect.objectContaining({
        name: "cut-release",
        description: "Ship a version",
        why: expect.stringMatching(/^semantic similarity 0\.\d{3} \(#1\)/),
        next_step: { tool: "skills_read", input: { name: "cut-release" } },
      }),
    ]);
    // Neither memory_search nor a disabled skill's vector answers for it.
    expect((await hitsOf("memory_search", input, hybrid)).map((hit) => hit.target)).not.toContain(
      "cut-release",
    );
    await call("disable_skill", { name: "cut-release" }, hybrid);
    expect(await skillsOf(hybrid)).toEqual([]);
  });

  it("skills_search finds a skill by a paraphrase of its one-line description (embedded with it)", async () => {
    const description = "Promote the standby database when the primary dies";
    // Full text needs every word ("death" is nowhere); only the description shares the rest with it.
    const skillsOf = await skillSearch(
      {
        name: "db-failover",
        description,
        content: "Run pg_ctl promote on the replica host, then repoint the connection strings.",
      },
      "promoting standby databases after primary death",
    );
    expect(await skillsOf(FULL_TEXT_ONLY)).toEqual([]);
    expect(await skillsOf(hybrid)).toEqual([
      expect.objectContaining({
        name: "db-failover",
        description,
        why: expect.stringMatching(/^semantic similarity 0\.\d{3} \(#1\)/),
      }),
    ]);
  });

  it("recall finds a note by meaning when no searched word of the input is in it", async () => {
    await note("qa.md", "QA signs off on UI changes.");
    await embedded();
    const request = {
      tenant_id: agent.tenantId,
      agent_id: agent.agentId,
      // Recall searches words of three letters or more: "who" and "does" only, which the note lacks.
      text: "Who does QA for UI?",
      limit: 5,
    };
    expect((await recallMemory(testDb.appDb, request, FULL_TEXT_ONLY)).hits).toEqual([]);
    expect((await recallMemory(testDb.appDb, request, hybrid)).hits).toEqual([
      {
        store: "workspace_memory_notes",
        target: "qa.md",
        version_id: expect.any(String),
        content: "QA signs off on UI changes.",
        rank: expect.any(Number),
      },
    ]);
    // The full-text list still answers a matching input, and skills and notepads are never recalled.
    await call("write_notepad", { content: "vpn certificate scribbles" }, hybrid);
    const vpn = await recallMemory(testDb.appDb, { ...request, text: "vpn certificate renewal" }, hybrid);
    expect(vpn.hits.map((hit) => hit.target)).toEqual(["vpn.md"]);
  });
});
