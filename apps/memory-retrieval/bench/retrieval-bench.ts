import { monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type Bus, connectBus, createOutboxRelay, ensureStreams } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import { append, embeddingBacklog, indexSessionEvents, newId, searchSessionEvents } from "@wakeloop/db";
import { startFakeModelServer } from "@wakeloop/fake-model";
import { createMemoryClient } from "@wakeloop/memory-client";
import { createLogger } from "@wakeloop/telemetry";
import {
  cleanupPrefix,
  createTestDatabase,
  type LatencySummary,
  round2,
  seedAgent,
  seedSession,
  summarize,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { EMBED_MAX_ATTEMPTS, startEmbedder } from "../src/embedder";
import { createEmbeddingsClient } from "../src/embeddings-client";
import { startEventIndexer } from "../src/event-indexer";
import { startMemoryServer } from "../src/memory-server";
import { SEARCH_PHASES, type SearchPhase } from "../src/search-phases";
import type { SearchSettings } from "../src/tool-call";
import { createVectorCache } from "../src/vector-cache";
import { SEED_SQL, timed, WORDS } from "./memory-bench";

/*
 * Retrieval over session history, in a throwaway database and subject prefix:
 *   npx tsx apps/memory-retrieval/bench/retrieval-bench.ts
 * - seed: `events` messages of one agent over `sessions` sessions written to the index in batches
 *   through `indexSessionEvents` (the indexer's insert), reported as events per second, and
 *   `memoryEntries` memory entries (as the memory bench seeds them);
 * - search: `retrieval_search` through the memory service (NATS request/reply to one of two replicas),
 *   over memory and the indexed events, websearch syntax, each query word matching a few percent of
 *   the events (`or` queries a tenth of them);
 * - hybrid (unless `hybrid: false`): the same searches with embeddings on (the fake model server's
 *   256-dimension vectors, every event and entry embedded first by both replicas' embedders);
 * - lag: an event appended to a session (the event store's commit, with its outbox row) until a search
 *   finds it: outbox relay → JetStream → the indexer's durable consumer → the index, polled every 2 ms.
 * Each series of searches also reports where the replicas' time went (the phases `rankedSearch`
 * records on its span, read back from an in-memory exporter) and how this process fared meanwhile
 * (event-loop delay, garbage-collection pauses): the replicas, the fake endpoint and the client share it.
 */

export interface RetrievalBenchOptions {
  events?: number;
  sessions?: number;
  searches?: number;
  lagSamples?: number;
  memoryEntries?: number;
  hybrid?: boolean;
}

export interface RetrievalBenchResult {
  events: number;
  indexedPerSecond: number;
  memoryEntries: number;
  searchMs: LatencySummary;
  meanHitsPerSearch: number;
  /** Where the full-text searches' time went, per phase (`SEARCH_PHASES`), and the process meanwhile. */
  searchPhasesMs: PhaseSummaries;
  searchProcess: ProcessSummary;
  commitToSearchableMs: LatencySummary;
  /** Vectors made per second by the two embedders (fake endpoint), and the hybrid searches. */
  embeddedPerSecond?: number;
  hybridSearchMs?: LatencySummary;
  hybridPhasesMs?: PhaseSummaries;
  hybridProcess?: ProcessSummary;
}

export type PhaseSummaries = Partial<Record<SearchPhase, LatencySummary>>;

/** This process during a series: its event loop's delay and its garbage collector's pauses. */
export interface ProcessSummary {
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  gcPauses: number;
  gcPauseTotalMs: number;
  gcPauseMaxMs: number;
}

/** Runs `series` while watching the event loop and the garbage collector. */
async function watched<T>(series: () => Promise<T>): Promise<{ result: T; process: ProcessSummary }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const pauses: number[] = [];
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  });
  gc.observe({ entryTypes: ["gc"] });
  delay.enable();
  try {
    const result = await series();
    return {
      result,
      process: {
        eventLoopDelayP99Ms: round2(delay.percentile(99) / 1e6),
        eventLoopDelayMaxMs: round2(delay.max / 1e6),
        gcPauses: pauses.length,
        gcPauseTotalMs: round2(pauses.reduce((sum, ms) => sum + ms, 0)),
        gcPauseMaxMs: round2(Math.max(0, ...pauses)),
      },
    };
  } finally {
    delay.disable();
    gc.disconnect();
  }
}

/** The phases the replicas recorded on their `memory retrieval_search` spans. */
function phasesOf(exporter: InMemorySpanExporter): PhaseSummaries {
  const spans = exporter.getFinishedSpans().filter((span) => span.name === "memory retrieval_search");
  const phases: PhaseSummaries = {};
  for (const phase of SEARCH_PHASES) {
    const samples = spans.flatMap((span) => {
      const ms = span.attributes[`wakeloop.retrieval.${phase}_ms`];
      return typeof ms === "number" ? [ms] : [];
    });
    if (samples.length > 0) phases[phase] = summarize(samples);
  }
  return phases;
}

const BATCH = 2_000;

/** A message of 40 words, deterministic from its index: three topical words, the rest filler. */
function text(index: number): string {
  const words: string[] = [];
  for (let w = 1; w <= 40; w++) {
    words.push(
      w <= 3
        ? (WORDS[(index * 7919 + w * 104729) % WORDS.length] ?? "")
        : `w${(index * 31 + w * 7877) % 5000}`,
    );
  }
  return words.join(" ");
}

export async function runRetrievalBench(options: RetrievalBenchOptions = {}): Promise<RetrievalBenchResult> {
  const total = options.events ?? 100_000;
  const sessionCount = options.sessions ?? 50;
  const searches = options.searches ?? 300;
  const lagSamples = options.lagSamples ?? 200;
  const memoryEntries = options.memoryEntries ?? 10_000;
  const database = await createTestDatabase({ max: 10 });
  const prefix = testPrefix();
  const buses: Bus[] = [];
  const stoppers: Array<() => Promise<void>> = [];
  // The replicas' spans, kept in memory for their phases; spans need an active context to nest in.
  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer(
    "retrieval-bench",
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    const agent = await seedAgent(database.db);
    const sessions: string[] = [];
    for (let index = 0; index < sessionCount; index++)
      sessions.push((await seedSession(database.db, agent)).id);

    const seeded = performance.now();
    for (let start = 0; start < total; start += BATCH) {
      const batch: SessionEvent[] = [];
      for (let index = start; index < Math.min(total, start + BATCH); index++) {
        batch.push({
          id: `event_bench_${index}`,
          session_id: sessions[index % sessionCount] ?? "",
          seq: 1 + Math.floor(index / sessionCount),
          processed_at: null,
          created_at: new Date().toISOString(),
          type: index % 2 === 0 ? "user.message" : "agent.message",
          content: [{ type: "text", text: text(index) }],
        });
      }
      await indexSessionEvents(database.appDb, agent.tenantId, batch);
    }
    const indexedPerSecond = Math.round(total / ((performance.now() - seeded) / 1_000));
    await SEED_SQL(memoryEntries, agent.tenantId, agent.agentId).execute(database.db);
    await sql`ANALYZE session_event_index`.execute(database.db);
    await sql`ANALYZE memory_entries`.execute(database.db);

    for (const name of ["client", "replica-a", "replica-b"])
      buses.push(await connectBus({ servers: testNatsUrl(), prefix, name }));
    const [client, service, second] = buses as [Bus, Bus, Bus];
    const log = createLogger({ service: "retrieval-bench", level: "warn" });
    await ensureStreams(service.jsm, service.catalog);
    const relay = createOutboxRelay({
      db: database.db,
      listenUrl: database.url,
      bus: service,
      pollIntervalMs: 50,
    });
    await relay.start();
    stoppers.push(() => relay.stop());
    const indexer = await startEventIndexer({
      db: database.appDb,
      bus: service,
      log,
      concurrency: 16,
      batchIntervalMs: 10,
    });
    stoppers.push(() => indexer.stop());
    // Two replicas in the queue group; `search` is what each searches with (swapped for the hybrid run).
    let searchSettings: SearchSettings | undefined;
    const replicas = new Map<Bus, { stop(): Promise<void> }>();
    const startReplicas = () => {
      for (const bus of [service, second]) {
        replicas.set(
          bus,
          startMemoryServer({
            bus,
            db: database.appDb,
            tracer,
            log,
            limits: { maxEntryBytes: 64 * 1024, maxStoreBytes: 1024 ** 3 },
            ...(searchSettings !== undefined && { search: searchSettings }),
            replicaId: `bench-${replicas.size}`,
          }),
        );
      }
    };
    const stopReplicas = async () => {
      await Promise.all([...replicas.values()].map((replica) => replica.stop()));
      replicas.clear();
    };
    startReplicas();
    stoppers.push(stopReplicas);
    await Promise.all(buses.map((bus) => bus.nc.flush()));
    const memory = createMemoryClient(client);

    let hits = 0;
    let callIndex = 0;
    const search = (index: number) => {
      const a = WORDS[Math.abs(index) % WORDS.length];
      const b = WORDS[Math.abs(index * 13 + 5) % WORDS.length];
      const query =
        index % 3 === 0 ? `"${a} ${b}"` : index % 3 === 1 ? `${a} ${b}` : `${a} or ${b} -${WORDS[0]}`;
      return memory.execute({
        tenant_id: agent.tenantId,
        agent_id: agent.agentId,
        // A session of the agent, so every search reads the ranking priors' facts as a wake's would.
        session_id: sessions[0] ?? "",
        wake_id: "wake_bench",
        tool_call_id: `tcall_bench_${callIndex++}`,
        tool: "retrieval_search",
        input: { query, limit: 10 },
      });
    };
    /** `searches` timed searches (after the warm-up), with their phases and the process meanwhile. */
    const measure = (count: (index: number, response: Awaited<ReturnType<typeof search>>) => void) =>
      watched(() =>
        timed(searches, async (index) => {
          if (index === 0) spans.reset();
          count(index, await search(index));
        }),
      );
    const fullText = await measure((index, response) => {
      if (index >= 0) hits += (response.result.hits as unknown[]).length;
    });
    const searchPhasesMs = phasesOf(spans);

    const scope = { tenantId: agent.tenantId, agentId: agent.agentId };
    const lags: number[] = [];
    for (let index = 0; index < lagSamples; index++) {
      const token = `lagtoken${index}x${newId("event").slice(-8)}`;
      await append(database.appDb, {
        tenantId: agent.tenantId,
        sessionId: sessions[index % sessionCount] ?? "",
        events: [{ type: "user.message", content: [{ type: "text", text: `probe ${token}` }] }],
      });
      const committed = performance.now();
      const deadline = committed + 10_000;
      while ((await searchSessionEvents(database.appDb, scope, { query: token, limit: 1 })).length === 0) {
        if (performance.now() > deadline) throw new Error(`event ${token} was not searchable within 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      lags.push(performance.now() - committed);
    }
    const result: RetrievalBenchResult = {
      events: total,
      indexedPerSecond,
      memoryEntries,
      searchMs: fullText.result,
      meanHitsPerSearch: Math.round((hits / searches) * 100) / 100,
      searchPhasesMs,
      searchProcess: fullText.process,
      commitToSearchableMs: summarize(lags),
    };
    if (options.hybrid === false) return result;

    const fake = await startFakeModelServer();
    stoppers.push(() => fake.close());
    const embeddings = createEmbeddingsClient({
      baseUrl: `${fake.url}/v1`,
      model: "fake-embed",
      apiKey: undefined,
      dimensions: undefined,
      timeoutMs: 30_000,
    });
    const embedStarted = performance.now();
    const embedders: Array<{ stop(): Promise<void> }> = [];
    for (const _ of [service, second]) {
      embedders.push(
        await startEmbedder({ db: database.appDb, log, embeddings, batchSize: 256, pollMs: 100 }),
      );
    }
    stoppers.push(async () => {
      await Promise.all(embedders.map((embedder) => embedder.stop()));
    });
    for (;;) {
      const backlog = await embeddingBacklog(database.db, EMBED_MAX_ATTEMPTS);
      if (backlog.pending === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    result.embeddedPerSecond = Math.round(
      (total + lagSamples + memoryEntries) / ((performance.now() - embedStarted) / 1_000),
    );
    // As the seeded tables before the full-text run: statistics and the visibility map of 110 000 new
    // vectors now, not from autovacuum in the middle of the measured searches.
    await sql`VACUUM ANALYZE retrieval_embeddings`.execute(database.db);
    await sql`VACUUM ANALYZE embedding_backlog`.execute(database.db);
    await stopReplicas();
    // One replica's defaults (config.ts): a window of 1 000 vectors of each kind, 64 MB of them held.
    searchSettings = {
      embeddings,
      vectorWindow: 1_000,
      minSimilarity: 0.25,
      vectorCache: createVectorCache(64 * 1024 * 1024),
    };
    startReplicas();
    await Promise.all(buses.map((bus) => bus.nc.flush()));
    const hybrid = await measure(() => undefined);
    result.hybridSearchMs = hybrid.result;
    result.hybridPhasesMs = phasesOf(spans);
    result.hybridProcess = hybrid.process;
    return result;
  } finally {
    context.disable();
    for (const stop of stoppers.reverse()) await stop();
    if (buses[0]) await cleanupPrefix(buses[0].jsm, prefix);
    await Promise.all(buses.map((bus) => bus.close()));
    await database.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRetrievalBench().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
