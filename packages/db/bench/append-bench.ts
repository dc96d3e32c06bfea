import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import {
  acquireLease,
  append,
  appendAt,
  createSession,
  type Database,
  getSession,
  listAgentTools,
  type NewEvent,
  newId,
  openWake,
  readEvents,
  type SessionHead,
  setAgentState,
  startWake,
  withTenant,
} from "@wakeloop/db";
import {
  createTestDatabase,
  type LatencySummary,
  round2 as round,
  type SeededAgent,
  seedAgent,
  summarize,
  type TestDatabase,
} from "@wakeloop/testing";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";

/*
 * Event-store append throughput and latency on a real Postgres, in a throwaway database:
 *   npx tsx packages/db/bench/append-bench.ts
 * Scenarios: one session with one writer (a wake appending), one session with many writers (the
 * row lock serializes them), and several sessions each with its own writer (how appends scale). And
 * the commit of a state-tool step (`set_state`'s upsert with the step's events), as one statement
 * (`agentState`) and as a transaction around the upsert and the append (what a step with other
 * inline tools does), with the statements each sends: the round trips, which load does not distort.
 * And a wake start's reads (lease, history, the agent's tools) in one call and as separate reads.
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

export interface RoundTripResult {
  /** Steps or wake starts measured. */
  count: number;
  /** Statements sent per step: each one a round trip. */
  roundTrips: number;
  latencyMs: LatencySummary;
}

export interface AppendBenchResult {
  eventsPerAppend: number;
  stateStep: { oneCall: RoundTripResult; transaction: RoundTripResult };
  wakeStart: { oneCall: RoundTripResult; separate: RoundTripResult };
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

/** A state-tool step's events: the call, the response's end, its result and the next request's start. */
function stepEvents(index: number): NewEvent[] {
  const callId = newId("event");
  return [
    {
      id: callId,
      type: "agent.tool_use",
      name: "set_state",
      input: { key: `k${index}` },
      evaluated_permission: "allow",
    },
    {
      type: "agent.tool_result",
      tool_use_id: callId,
      content: [{ type: "text", text: "{}" }],
      is_error: false,
    },
    { type: "span.model_request_start", model: "bench" },
  ];
}

/** A pool of one connection that counts the statements it sends, each a round trip. */
function countingDb(testDb: TestDatabase) {
  const counter = { statements: 0 };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: testDb.appUrl, max: 1 }) }),
    log: () => {
      counter.statements += 1;
    },
  });
  return { db, counter };
}

/** `steps` state-tool step commits on one session from its head, counting the statements sent. */
async function stateSteps(
  testDb: TestDatabase,
  seeded: SeededAgent,
  steps: number,
  mode: "oneCall" | "transaction",
): Promise<RoundTripResult> {
  const { db, counter } = countingDb(testDb);
  try {
    const { tenantId, agentId } = seeded;
    const sessionId = await newSession(testDb, seeded);
    const row = await getSession(testDb.appDb, tenantId, sessionId);
    if (row === null) throw new Error("no session");
    let head: SessionHead = { lastSeq: row.last_seq, state: row.state };
    const latencies: number[] = [];
    for (let index = 0; index < steps; index++) {
      const key = `bench/${mode}/${index % 16}`;
      const value = { n: index };
      const events = stepEvents(index);
      const before = performance.now();
      head =
        mode === "oneCall"
          ? (await appendAt(db, { tenantId, sessionId, head, events, agentState: [{ key, value }] })).head
          : await withTenant(db, tenantId, async (trx) => {
              await setAgentState(trx, { tenantId, agentId }, key, value);
              return (await appendAt(trx, { tenantId, sessionId, head, events })).head;
            });
      latencies.push(performance.now() - before);
    }
    return { count: steps, roundTrips: round(counter.statements / steps), latencyMs: summarize(latencies) };
  } finally {
    await db.destroy();
  }
}

/**
 * `starts` wake starts' reads (a new session with one message, its queued wake): in one call
 * (`startWake`), and as the lease, then the history and the agent's tools side by side.
 */
async function wakeStarts(
  testDb: TestDatabase,
  seeded: SeededAgent,
  starts: number,
  mode: "oneCall" | "separate",
): Promise<RoundTripResult> {
  const { db, counter } = countingDb(testDb);
  try {
    const { tenantId, agentId } = seeded;
    const latencies: number[] = [];
    let statements = 0;
    for (let index = 0; index < starts; index++) {
      const sessionId = await newSession(testDb, seeded);
      await append(testDb.appDb, { tenantId, sessionId, events: batch(1, 0, index) });
      const wake = await openWake(testDb.appDb, { tenantId, sessionId, reason: "user_message" });
      if (wake === null) throw new Error("no wake");
      const lease = { tenantId, sessionId, wakeId: wake.id, workerId: "bench", ttlMs: 30_000 };
      const before = performance.now();
      const sent = counter.statements;
      if (mode === "oneCall") await startWake(db, { ...lease, knownSeq: 0, pageSize: 1_000 });
      else {
        const acquired = await acquireLease(db, lease);
        const afterSeq = acquired?.session.last_seq ?? 0;
        await Promise.all([
          readEvents(db, { tenantId, sessionId, afterSeq: 0, limit: afterSeq }),
          listAgentTools(db, { tenantId, agentId }),
        ]);
      }
      latencies.push(performance.now() - before);
      statements += counter.statements - sent;
    }
    return { count: starts, roundTrips: round(statements / starts), latencyMs: summarize(latencies) };
  } finally {
    await db.destroy();
  }
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
    const steps = Math.max(50, appendsPerWriter);
    await stateSteps(testDb, seeded, 50, "oneCall");
    await stateSteps(testDb, seeded, 50, "transaction");
    await wakeStarts(testDb, seeded, 20, "oneCall");
    await wakeStarts(testDb, seeded, 20, "separate");
    return {
      eventsPerAppend,
      stateStep: {
        oneCall: await stateSteps(testDb, seeded, steps, "oneCall"),
        transaction: await stateSteps(testDb, seeded, steps, "transaction"),
      },
      wakeStart: {
        oneCall: await wakeStarts(testDb, seeded, Math.ceil(steps / 2), "oneCall"),
        separate: await wakeStarts(testDb, seeded, Math.ceil(steps / 2), "separate"),
      },
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
