import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { append, createSession, type NewEvent } from "@wakeloop/db";
import {
  createTestDatabase,
  type LatencySummary,
  round2 as round,
  type SeededAgent,
  seedAgent,
  summarize,
  type TestDatabase,
} from "@wakeloop/testing";

/*
 * Event-store append throughput and latency on a real Postgres, in a throwaway database:
 *   npx tsx packages/db/bench/append-bench.ts
 * Scenarios: one session with one writer (a wake appending), one session with many writers (the
 * row lock serializes them), and several sessions each with its own writer (how appends scale).
 * Appends run as the services' role, so row-level security and the tenant setting are on the path.
 */

export interface AppendBenchOptions {
  /** Appends each writer makes. */
  appendsPerWriter?: number;
  eventsPerAppend?: number;
  /** Writers on the single contended session. */
  contendedWriters?: number;
  /** Sessions (one writer each) in the parallel scenario. */
  parallelSessions?: number;
}

export interface ScenarioResult {
  sessions: number;
  writers: number;
  appends: number;
  events: number;
  durationMs: number;
  appendsPerSecond: number;
  eventsPerSecond: number;
  latencyMs: LatencySummary;
}

export interface AppendBenchResult {
  eventsPerAppend: number;
  singleSession: ScenarioResult;
  contendedSession: ScenarioResult;
  parallelSessions: ScenarioResult;
}

function batch(size: number, writer: number, index: number): NewEvent[] {
  return Array.from({ length: size }, (_, n) => ({
    type: "agent.message",
    content: [
      { type: "text", text: `writer ${writer} append ${index} event ${n}: ${"lorem ipsum ".repeat(16)}` },
    ],
  }));
}

async function newSession(testDb: TestDatabase, seeded: SeededAgent): Promise<string> {
  const session = await createSession(testDb.appDb, {
    tenantId: seeded.tenantId,
    agentId: seeded.agentId,
    agentVersion: seeded.agentVersion,
    environmentId: null,
    parentSessionId: null,
    title: "bench",
    metadata: {},
    budget: { max_total_tokens: null },
  });
  return session.id;
}

async function scenario(
  testDb: TestDatabase,
  seeded: SeededAgent,
  sessionIds: readonly string[],
  writersPerSession: number,
  appendsPerWriter: number,
  eventsPerAppend: number,
): Promise<ScenarioResult> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    sessionIds.flatMap((sessionId) =>
      Array.from({ length: writersPerSession }, async (_, writer) => {
        for (let index = 0; index < appendsPerWriter; index++) {
          const before = performance.now();
          await append(testDb.appDb, {
            tenantId: seeded.tenantId,
            sessionId,
            events: batch(eventsPerAppend, writer, index),
          });
          latencies.push(performance.now() - before);
        }
      }),
    ),
  );
  const durationMs = performance.now() - started;
  const appends = latencies.length;
  return {
    sessions: sessionIds.length,
    writers: sessionIds.length * writersPerSession,
    appends,
    events: appends * eventsPerAppend,
    durationMs: round(durationMs),
    appendsPerSecond: round((appends / durationMs) * 1_000),
    eventsPerSecond: round(((appends * eventsPerAppend) / durationMs) * 1_000),
    latencyMs: summarize(latencies),
  };
}

export async function runAppendBench(options: AppendBenchOptions = {}): Promise<AppendBenchResult> {
  const appendsPerWriter = options.appendsPerWriter ?? 500;
  const eventsPerAppend = options.eventsPerAppend ?? 1;
  const contendedWriters = options.contendedWriters ?? 8;
  const parallelSessions = options.parallelSessions ?? 8;
  const testDb = await createTestDatabase({ max: Math.max(contendedWriters, parallelSessions) + 2 });
  try {
    const seeded = await seedAgent(testDb.db);
    // Warm the pool, the plan cache and the JIT before measuring.
    await scenario(testDb, seeded, [await newSession(testDb, seeded)], 4, 50, eventsPerAppend);
    const run = async (sessions: number, writers: number) =>
      scenario(
        testDb,
        seeded,
        await Promise.all(Array.from({ length: sessions }, () => newSession(testDb, seeded))),
        writers,
        appendsPerWriter,
        eventsPerAppend,
      );
    return {
      eventsPerAppend,
      singleSession: await run(1, 1),
      contendedSession: await run(1, contendedWriters),
      parallelSessions: await run(parallelSessions, 1),
    };
  } finally {
    await testDb.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAppendBench().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
