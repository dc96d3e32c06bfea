import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { trace } from "@opentelemetry/api";
import { type Bus, connectBus } from "@wakeloop/bus";
import type { MemoryExecuteRequest } from "@wakeloop/contracts";
import { createMemoryClient } from "@wakeloop/memory-client";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type LatencySummary,
  seedAgent,
  summarize,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { startMemoryServer } from "../src/memory-server";

/*
 * Memory through the service, as the harness calls it (NATS request/reply to one of two replicas,
 * Postgres as the services' role), in a throwaway database:
 *   npx tsx apps/memory-retrieval/bench/memory-bench.ts
 * - write: `memory_write` of a new entry (a version, the live entry and the call record in one
 *   transaction), one call at a time;
 * - search: `memory_search` over `entries` live entries of one agent (full text, websearch syntax;
 *   each query word matches a few percent of the entries);
 * - trigram: identifier fragments the text parser cannot match, answered by the fallback;
 * - recall: the wake-start `recall` action for a question of about ten words (any word matches; three
 *   from the vocabulary), the top 5 entries with their content.
 */

export interface MemoryBenchOptions {
  entries?: number;
  writes?: number;
  searches?: number;
}

export interface MemoryBenchResult {
  entries: number;
  writeMs: LatencySummary;
  searchMs: LatencySummary;
  trigramSearchMs: LatencySummary;
  recallMs: LatencySummary;
  meanHitsPerSearch: number;
}

export const WORDS = (
  "deploy rollback staging release postgres vacuum index replica cache latency budget token wake session " +
  "sandbox shell commit migration schema trace span queue worker lease retry timeout memory skill notepad " +
  "checkout billing invoice customer ticket incident outage alert dashboard metric kafka redis nginx docker"
).split(" ");

/**
 * Entries of 60 words, deterministic from their index: three from the vocabulary above (so a query
 * word matches a few percent of entries, as topical words do), the rest from 5 000 filler words.
 */
export const SEED_SQL = (count: number, tenantId: string, agentId: string) => sql`
  WITH docs AS (
    SELECT i, 'note-' || i || '.md' AS target,
      (SELECT string_agg(CASE WHEN w <= 3
          THEN (${WORDS}::text[])[1 + ((i * 7919 + w * 104729) % ${WORDS.length}::int)]
          ELSE 'w' || ((i * 31 + w * 7877) % 5000) END, ' ')
         || ' id_' || md5(i::text) FROM generate_series(1, 60) w) AS content
    FROM generate_series(1, ${count}::int) i
  ), versions AS (
    INSERT INTO memory_versions (id, tenant_id, agent_id, store, target, content, content_hash, size_bytes,
      author_kind)
    SELECT 'memv_bench_' || lpad(i::text, 8, '0'), ${tenantId}, ${agentId}, 'workspace_memory_notes', target,
      content, 'sha256:' || md5(content), octet_length(content), 'harness'
    FROM docs RETURNING id, target, content, size_bytes
  )
  INSERT INTO memory_entries (tenant_id, agent_id, store, target, content, size_bytes, current_version_id)
  SELECT ${tenantId}, ${agentId}, 'workspace_memory_notes', target, content, size_bytes, id FROM versions`;

/** Latency of `count` sequential runs after 20 warm-up runs (given negative indexes). */
export async function timed(
  count: number,
  run: (index: number) => Promise<unknown>,
): Promise<LatencySummary> {
  for (let index = 0; index < 20; index++) await run(-index - 1);
  const samples: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await run(index);
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

export async function runMemoryBench(options: MemoryBenchOptions = {}): Promise<MemoryBenchResult> {
  const entries = options.entries ?? 10_000;
  const writes = options.writes ?? 500;
  const searches = options.searches ?? 500;
  const database = await createTestDatabase({ max: 10 });
  const prefix = testPrefix();
  const buses: Bus[] = [];
  const replicas: Array<{ stop(): Promise<void> }> = [];
  try {
    const agent = await seedAgent(database.db);
    await SEED_SQL(entries, agent.tenantId, agent.agentId).execute(database.db);
    await sql`ANALYZE memory_entries`.execute(database.db);
    for (const name of ["client", "replica-a", "replica-b"])
      buses.push(await connectBus({ servers: testNatsUrl(), prefix, name }));
    const log = createLogger({ service: "memory-bench", level: "warn" });
    for (const [index, bus] of buses.slice(1).entries()) {
      replicas.push(
        startMemoryServer({
          bus,
          db: database.appDb,
          tracer: trace.getTracer("memory-bench"),
          log,
          limits: { maxEntryBytes: 64 * 1024, maxStoreBytes: 1024 ** 3 },
          replicaId: `bench-${index}`,
        }),
      );
    }
    await Promise.all(buses.map((bus) => bus.nc.flush()));
    const client = createMemoryClient(buses[0] as Bus);
    let callIndex = 0;
    const call = (tool: MemoryExecuteRequest["tool"], input: unknown) =>
      client.execute({
        tenant_id: agent.tenantId,
        agent_id: agent.agentId,
        session_id: "sesn_bench",
        wake_id: "wake_bench",
        tool_call_id: `tcall_bench_${callIndex++}`,
        tool,
        input,
      });

    const writeMs = await timed(writes, (index) =>
      call("memory_write", {
        store: "bench_writes",
        target: `w-${index}`,
        content: `${WORDS.join(" ")} ${index}`,
      }),
    );
    let hits = 0;
    const searchMs = await timed(searches, async (index) => {
      const a = WORDS[index % WORDS.length];
      const b = WORDS[(index * 13 + 5) % WORDS.length];
      const query =
        index % 3 === 0 ? `"${a} ${b}"` : index % 3 === 1 ? `${a} ${b}` : `${a} or ${b} -${WORDS[0]}`;
      const response = await call("memory_search", { query, limit: 10 });
      hits += (response.result.hits as unknown[]).length;
    });
    const trigramSearchMs = await timed(Math.min(searches, 200), (index) =>
      call("memory_search", {
        // A fragment of an identifier one entry holds: the text parser keeps whole hashes as one token.
        query: `id_${createHash("md5")
          .update(String(1 + ((index * 7919) % entries)))
          .digest("hex")
          .slice(0, 10)}`,
        limit: 10,
      }),
    );
    const recallMs = await timed(searches, (index) =>
      client.recall(
        {
          tenant_id: agent.tenantId,
          agent_id: agent.agentId,
          text: `How did we handle the ${WORDS[index % WORDS.length]} and ${WORDS[(index * 7 + 3) % WORDS.length]} problem with w${index % 5000} last ${WORDS[(index * 11 + 1) % WORDS.length]}?`,
          limit: 5,
        },
        5_000,
      ),
    );
    return {
      entries,
      writeMs,
      searchMs,
      trigramSearchMs,
      recallMs,
      meanHitsPerSearch: Math.round((hits / searches) * 100) / 100,
    };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await Promise.all(buses.map((bus) => bus.close()));
    await database.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runMemoryBench().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
