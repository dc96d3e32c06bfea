import type { RecordedRequest } from "@wakeloop/fake-model";
import { type LatencySummary, Platform, type RunMode, round2 as round, summarize } from "@wakeloop/testing";
import { benchScript, stepsMessage } from "./bench-script";
import { BENCH_APP_ENV, newSessions, say, waitForIdleWakes } from "./bench-sessions";
import { cpuBetween, peakRssMb, sampleCpu } from "./process-stats";
import { now } from "./stats";

/*
 * I/O-bound load (issue #9): many sessions at once, each a few tool steps, against a model that takes
 * a second per request. A wake then spends nearly all its time waiting, so what is measured is whether
 * the workers run every wake at once (queue wait), what the platform adds around each model second
 * (overhead), what that costs the worker (CPU, memory), and how wakes/s grow from one worker to two.
 */

const MODEL_LATENCY_MS = 1_000;
const STEPS = 3;

/** Model requests in flight at the busiest moment: how many wakes really waited on the model at once. */
function peakInFlight(requests: readonly RecordedRequest[]): number {
  const edges = requests.flatMap((request) => [
    [request.receivedAt, 1] as const,
    [request.finishedAt ?? Number.POSITIVE_INFINITY, -1] as const,
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let peak = 0;
  for (const [, step] of edges) {
    current += step;
    peak = Math.max(peak, current);
  }
  return peak;
}

const between = (from: Date | null, to: Date | null) =>
  (to?.getTime() ?? Number.NaN) - (from?.getTime() ?? Number.NaN);

/** Per model request after the first of its session: received − the previous response's end. */
function overheads(requests: readonly RecordedRequest[]): number[] {
  const bySession = new Map<string, RecordedRequest[]>();
  for (const request of requests) {
    const text = request.view?.lastUserText ?? "";
    bySession.set(text, [...(bySession.get(text) ?? []), request]);
  }
  const gaps: number[] = [];
  for (const list of bySession.values()) {
    for (let index = 1; index < list.length; index++) {
      const previous = list[index - 1]?.finishedAt;
      const current = list[index]?.receivedAt;
      if (previous !== undefined && current !== undefined) gaps.push(current - previous);
    }
  }
  return gaps;
}

export interface ConcurrentRun {
  workers: number;
  sessions: number;
  stepsPerSession: number;
  modelLatencyMs: number;
  /** First message sent → last session idle. */
  wallSeconds: number;
  wakesPerSecond: number;
  /** Beyond the model's time: next request received − previous response finished, same session. */
  overheadMs: LatencySummary;
  /** Wake created → running (lease taken), from the wakes table; then its two parts. */
  queueWaitMs: LatencySummary;
  /** Wake created → its job published (the orchestrator's hold). */
  queuedToPublishedMs: LatencySummary;
  /** Job published → running (a worker pulled it and took the lease). */
  publishedToRunningMs: LatencySummary;
  peakModelRequestsInFlight: number;
  /** Per worker process: CPU used over the run as % of one core, and peak resident memory. */
  workerCpuPercent: Record<string, number>;
  workerPeakRssMb: Record<string, number | undefined>;
  /** Times a worker started holding back new wakes (memory or Postgres pool waiters). */
  workerHoldBacks: number;
}

export async function concurrentSessions(
  platform: Platform,
  sessions: number,
  workers: number,
): Promise<ConcurrentRun> {
  const ids = await newSessions(platform, sessions);
  const firstRequest = platform.fake.requests.length;
  const cpuBefore = await sampleCpu(platform);
  const started = now();
  await Promise.all(ids.map((id, index) => say(platform, id, stepsMessage(STEPS, `c${index}`))));
  // A slow poll: a fast one over a thousand ids would load the Postgres being measured. The end of the
  // run is read from the sessions' own last update instead.
  await waitForIdleWakes(platform, ids, 600_000, 250);
  const cpuMs = cpuBetween(cpuBefore, await sampleCpu(platform));
  const last = await platform.db
    .selectFrom("sessions")
    .select((eb) => eb.fn.max("updated_at").as("at"))
    .where("id", "in", ids)
    .executeTakeFirstOrThrow();
  const wallMs = new Date(last.at as Date).getTime() - started;
  const wakes = await platform.db
    .selectFrom("wakes")
    .select(["created_at", "published_at", "started_at"])
    .where("session_id", "in", ids)
    .execute();
  const waits = (of: (wake: (typeof wakes)[number]) => number) =>
    summarize(wakes.map(of).filter(Number.isFinite));
  const requests = platform.fake.requests.slice(firstRequest);
  const workerNames = [...platform.apps.keys()].filter((name) => name.startsWith("worker-"));
  return {
    workers,
    sessions,
    stepsPerSession: STEPS,
    modelLatencyMs: MODEL_LATENCY_MS,
    wallSeconds: round(wallMs / 1000),
    wakesPerSecond: round(sessions / (wallMs / 1000)),
    overheadMs: summarize(overheads(requests)),
    queueWaitMs: waits((wake) => between(wake.created_at, wake.started_at)),
    queuedToPublishedMs: waits((wake) => between(wake.created_at, wake.published_at)),
    publishedToRunningMs: waits((wake) => between(wake.published_at, wake.started_at)),
    peakModelRequestsInFlight: peakInFlight(requests),
    workerCpuPercent: Object.fromEntries(
      workerNames.map((name) => [name, round(((cpuMs[name] ?? 0) / wallMs) * 100)]),
    ),
    workerPeakRssMb: Object.fromEntries(
      workerNames.map((name) => [name, peakRssMb(platform.app(name).pid ?? 0)]),
    ),
    workerHoldBacks: workerNames
      .flatMap((name) => platform.app(name).records)
      .filter((record) => record.msg?.startsWith("holding back new wakes")).length,
  };
}

export interface ConcurrencyBenchResult {
  oneWorker: ConcurrentRun;
  twoWorkers: ConcurrentRun;
  /** wakes/s of two workers over one, same load. */
  twoOverOne: number;
}

export async function runConcurrencyBench(
  options: { quick?: boolean; run?: RunMode } = {},
): Promise<ConcurrencyBenchResult> {
  const sessions = options.quick ? 200 : 1_000;
  const run = async (workers: number) => {
    const platform = await Platform.start({
      workers,
      run: options.run,
      script: benchScript({ latencyMs: MODEL_LATENCY_MS }),
      appEnv: BENCH_APP_ENV,
      // A slot per session, so every wake can run at once; the same Postgres pool per worker in both
      // runs, small enough that two workers and the services stay under Postgres' 100 connections.
      workerEnv: { WORKER_SLOTS: String(sessions), DATABASE_POOL_MAX: "20" },
    });
    try {
      return await concurrentSessions(platform, sessions, workers);
    } finally {
      await platform.stop();
    }
  };
  const oneWorker = await run(1);
  const twoWorkers = await run(2);
  return { oneWorker, twoWorkers, twoOverOne: round(twoWorkers.wakesPerSecond / oneWorker.wakesPerSecond) };
}
