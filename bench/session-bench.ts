import { type LatencySummary, Platform, type RunMode, round2 as round, summarize } from "@wakeloop/testing";
import { sql } from "kysely";
import { benchScript, stepsMessage } from "./bench-script";
import { BENCH_APP_ENV, type BenchProvider, newSessions, say, waitForIdleWakes } from "./bench-sessions";
import { cpuBetween, sampleCpu } from "./process-stats";
import { now } from "./stats";

/*
 * The session loop measured through the running platform (every service its own process) against the
 * fake model with zero latency. A step of the tool loop is a call of the built-in state tool
 * `set_state` (bench-script.ts).
 */

/** Event accepted (POST answered) → model request received, one idle session after another. */
async function dispatchLatency(platform: Platform, count: number, provider: BenchProvider) {
  const sessions = await newSessions(platform, count, provider);
  const fromSend: number[] = [];
  const fromAccept: number[] = [];
  for (const id of sessions) {
    const seen = platform.fake.requests.length;
    const sent = now();
    await say(platform, id, "hi");
    const accepted = now();
    const request = await platform.fake.waitForRequest(seen + 1, 10_000);
    fromSend.push(request.receivedAt - sent);
    fromAccept.push(request.receivedAt - accepted);
    await waitForIdleWakes(platform, [id], 10_000);
  }
  return { fromAccepted: summarize(fromAccept), fromSent: summarize(fromSend) };
}

/** Model response finished → next model request received, for a long tool loop in one session. */
async function durableToolStep(platform: Platform, steps: number, provider: BenchProvider) {
  const [id] = await newSessions(platform, 1, provider);
  if (!id) throw new Error("no session");
  const first = platform.fake.requests.length;
  await say(platform, id, stepsMessage(steps, "loop"));
  await waitForIdleWakes(platform, [id], 120_000);
  const requests = platform.fake.requests.slice(first);
  const gaps: number[] = [];
  for (let index = 1; index < requests.length; index++) {
    const previous = requests[index - 1]?.finishedAt;
    const current = requests[index]?.receivedAt;
    if (previous !== undefined && current !== undefined) gaps.push(current - previous);
  }
  // Bytes each step adds to the history: the rows of the step's events. Constant means no rewrite of
  // earlier history as the conversation grows (unlike a checkpoint of the whole state per step).
  const rows = await platform.db
    .selectFrom("session_events")
    .select(["seq", "type", sql<number>`pg_column_size(body)`.as("bytes")])
    .where("session_id", "=", id)
    .orderBy("seq")
    .execute();
  const perStep: number[] = [];
  let current = 0;
  for (const row of rows) {
    if (row.type === "span.model_request_start" && current > 0) {
      perStep.push(current);
      current = 0;
    }
    current += Number(row.bytes);
  }
  const window = 10;
  const avg = (values: number[]) => round(values.reduce((a, b) => a + b, 0) / Math.max(1, values.length));
  return {
    step: summarize(gaps),
    historyBytesPerStep: {
      first10: avg(perStep.slice(1, 1 + window)),
      last10: avg(perStep.slice(-window - 1, -1)),
    },
  };
}

/**
 * Many sessions running tool loops at once: committed durable tool steps per second, and the CPU
 * time each process spent per step (every service, the platform's Postgres backends, nats-server).
 */
async function toolStepThroughput(
  platform: Platform,
  sessions: number,
  steps: number,
  provider: BenchProvider,
) {
  const ids = await newSessions(platform, sessions, provider);
  const cpuBefore = await sampleCpu(platform);
  const started = now();
  await Promise.all(ids.map((id, index) => say(platform, id, stepsMessage(steps, `t${index}`))));
  await waitForIdleWakes(platform, ids, 300_000);
  const seconds = (now() - started) / 1000;
  const cpuMs = cpuBetween(cpuBefore, await sampleCpu(platform));
  const total = sessions * steps;
  return {
    sessions,
    stepsPerSession: steps,
    seconds: round(seconds),
    stepsPerSecond: round(total / seconds),
    cpuMsPerStep: Object.fromEntries(Object.entries(cpuMs).map(([label, ms]) => [label, round(ms / total)])),
  };
}

/** Many sessions with one plain turn each: wakes completed per second. */
async function wakeThroughput(platform: Platform, sessions: number, provider: BenchProvider) {
  const ids = await newSessions(platform, sessions, provider);
  const started = now();
  await Promise.all(ids.map((id) => say(platform, id, "hi")));
  await waitForIdleWakes(platform, ids, 300_000);
  const seconds = (now() - started) / 1000;
  return { sessions, seconds: round(seconds), wakesPerSecond: round(sessions / seconds) };
}

type DispatchLatency = Awaited<ReturnType<typeof dispatchLatency>>;

export interface SessionBenchResult {
  dispatchMs: DispatchLatency;
  dispatchTwoWorkersMs: DispatchLatency;
  durableToolStepMs: LatencySummary;
  historyBytesPerStep: { first10: number; last10: number };
  /** The first round of the tool loops after start (cold: JIT, pools, per-connection plans). */
  toolStepsFirstRound: Awaited<ReturnType<typeof toolStepThroughput>>;
  /** The same load again, right after: the steady state a long-running service sees. */
  toolSteps: Awaited<ReturnType<typeof toolStepThroughput>>;
  wakes: {
    oneWorker: Awaited<ReturnType<typeof wakeThroughput>>;
    twoWorkers: Awaited<ReturnType<typeof wakeThroughput>>;
  };
}

export async function runSessionBench(
  options: { quick?: boolean; run?: RunMode; provider?: BenchProvider } = {},
): Promise<SessionBenchResult> {
  const provider = options.provider ?? "openai_compatible";
  const scale = options.quick ? 0.2 : 1;
  const n = (value: number) => Math.max(5, Math.round(value * scale));
  // The shipped WORKER_SLOTS; long loops must not meet the per-wake request guard.
  const platformOptions = {
    script: benchScript(),
    workerEnv: { MAX_MODEL_REQUESTS_PER_WAKE: "1000" },
    appEnv: BENCH_APP_ENV,
  };

  const one = await Platform.start({ ...platformOptions, workers: 1, run: options.run });
  let oneWorker: Omit<SessionBenchResult, "dispatchTwoWorkersMs" | "wakes"> & {
    wakes: Pick<SessionBenchResult["wakes"], "oneWorker">;
  };
  try {
    await wakeThroughput(one, 20, provider); // warm-up: connections, JIT, prepared plans
    const dispatchMs = await dispatchLatency(one, n(200), provider);
    const loop = await durableToolStep(one, n(200), provider);
    const toolStepsFirstRound = await toolStepThroughput(one, n(50), 40, provider);
    const toolSteps = await toolStepThroughput(one, n(50), 40, provider);
    oneWorker = {
      dispatchMs,
      durableToolStepMs: loop.step,
      historyBytesPerStep: loop.historyBytesPerStep,
      toolStepsFirstRound,
      toolSteps,
      wakes: { oneWorker: await wakeThroughput(one, n(500), provider) },
    };
  } finally {
    await one.stop();
  }
  const two = await Platform.start({ ...platformOptions, workers: 2, run: options.run });
  try {
    await wakeThroughput(two, 20, provider);
    const dispatchTwoWorkersMs = await dispatchLatency(two, n(200), provider);
    const twoWorkers = await wakeThroughput(two, n(500), provider);
    return { ...oneWorker, dispatchTwoWorkersMs, wakes: { ...oneWorker.wakes, twoWorkers } };
  } finally {
    await two.stop();
  }
}
