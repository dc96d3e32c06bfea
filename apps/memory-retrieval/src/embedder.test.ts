import { embeddingBacklog, newId, writeMemory } from "@wakeloop/db";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { createLogger } from "@wakeloop/telemetry";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMBED_MAX_ATTEMPTS, startEmbedder } from "./embedder";
import { createEmbeddingsClient, type EmbeddingsClient } from "./embeddings-client";
import { executeMemoryCall } from "./memory-server";
import type { SearchSettings } from "./tool-call";
import { createVectorCache } from "./vector-cache";

// Replicas started with different embeddings settings, against real Postgres and the fake model
// server's `/v1/embeddings`: one without embeddings turns nothing off for the others, and two models
// (here one model at two sizes) each get their own vectors and search with them.

let testDb: TestDatabase;
let fake: FakeModelServer;
let agent: SeededAgent;
const log = createLogger({ service: "embedder-test", level: "silent" });
const limits = { maxEntryBytes: 4_096, maxStoreBytes: 65_536 };
const running: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 6 });
  fake = await startFakeModelServer();
  agent = await seedAgent(testDb.db);
});

afterAll(async () => {
  await Promise.all(running.map((embedder) => embedder.stop()));
  await fake?.close();
  await testDb?.drop();
});

const client = (dimensions?: number) =>
  createEmbeddingsClient({
    baseUrl: `${fake.url}/v1`,
    model: "fake-embed",
    apiKey: undefined,
    dimensions,
    timeoutMs: 5_000,
  });

async function replica(embeddings: EmbeddingsClient | null): Promise<SearchSettings> {
  running.push(await startEmbedder({ db: testDb.appDb, log, embeddings, batchSize: 16, pollMs: 20 }));
  return { embeddings, vectorWindow: 100, minSimilarity: 0.25, vectorCache: createVectorCache(1 << 20) };
}

/** Until every replica's embedder has drained its model's queue. */
const embedded = () =>
  expect
    .poll(() => embeddingBacklog(testDb.db, EMBED_MAX_ATTEMPTS), { timeout: 20_000 })
    .toEqual({ pending: 0, failed: 0 });

async function search(settings: SearchSettings, query: string) {
  const response = await executeMemoryCall(
    testDb.appDb,
    limits,
    {
      tenant_id: agent.tenantId,
      agent_id: agent.agentId,
      session_id: "sesn_none",
      wake_id: "wake_none",
      tool_call_id: newId("toolCall"),
      tool: "memory_search",
      input: { query },
    },
    settings,
  );
  return response.result as { ranking: string; hits: Array<{ target: string }> };
}

describe("replicas with different embeddings settings", () => {
  it("a replica without embeddings disables nothing; each model embeds and searches on its own", async () => {
    const withModel = await replica(client());
    // Started last, as the replica that used to turn the queue off for everyone.
    await replica(null);
    await writeMemory(
      testDb.appDb,
      agent,
      {
        store: "workspace_memory_notes",
        target: "staging.md",
        content: "The staging database password rotates every Monday.",
        author: { kind: "api", session_id: null, wake_id: null, tool_call_id: null, api_key_id: "key_x" },
      },
      limits,
    );
    await embedded();
    // Every word must match in full text ("often" is not in the note): only its vector finds it.
    const paraphrase = "how often is the staging password rotated";
    expect(await search(withModel, paraphrase)).toMatchObject({
      ranking: "hybrid",
      hits: [{ target: "staging.md" }],
    });

    // The same model shortened to 64 dimensions is another space: queued and stored beside the first.
    const shortened = await replica(client(64));
    await embedded();
    const sizes = await sql<{ model: string; bytes: number }>`
      SELECT model, length(vector) AS bytes FROM retrieval_embeddings WHERE target = 'staging.md'
      ORDER BY model`.execute(testDb.db);
    expect(sizes.rows).toEqual([
      { model: "fake-embed", bytes: 256 * 4 },
      { model: "fake-embed@64", bytes: 64 * 4 },
    ]);
    for (const settings of [withModel, shortened]) {
      expect(await search(settings, paraphrase)).toMatchObject({
        ranking: "hybrid",
        hits: [{ target: "staging.md" }],
      });
    }
  });
});
