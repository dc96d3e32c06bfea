import type { Script } from "@wakeloop/fake-model";
import { type LatencySummary, Platform, type RunMode, round2 as round, summarize } from "@wakeloop/testing";
import { sql } from "kysely";
import { now } from "./stats";

/*
 * The session loop measured through the running platform (every service its own process) against the
 * fake model with zero latency. A step of the tool loop is a call of `permissions_check`, a pure
 * inline tool, so what is measured is the platform: Postgres commits, JetStream hops, the harness.
 */

/** `steps:K` makes the model call a no-op tool K times, then answer; anything else is answered at once. */
export function benchScript(): Script {
  return {
    defaultTurn: (request) => {
      const steps = /^steps:(\d+)$/.exec(request.lastUserText);
      if (!steps) return { text: "ok", usage: { input_tokens: 10, output_tokens: 2 } };
      const done = Number(/step_(\d+)/.exec(request.toolResults.at(-1)?.text ?? "")?.[1] ?? 0);
      if (done >= Number(steps[1])) return { text: "done", usage: { input_tokens: 10, output_tokens: 2 } };
      return {
        toolCalls: [{ name: "permissions_check", input: { tool_name: `step_${done + 1}` } }],
        usage: { input_tokens: 10, output_tokens: 2 },
      };
    },
  };
}

async function newSessions(platform: Platform, count: number): Promise<string[]> {
  const agent = await platform.request("POST", "/v1/agents", { name: "bench", model: platform.fakeModel() });
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    ids.push((await platform.request("POST", "/v1/sessions", { agent: agent.body.id })).body.id);
  }
  return ids;
}

const say = (text: string) => ({ events: [{ type: "user.message", content: [{ type: "text", text }] }] });

async function waitForIdleWakes(
  platform: Platform,
  sessions: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await platform.db
      .selectFrom("sessions")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("id", "in", sessions)
      .where(sql<boolean>`(state->'stop_reason'->>'type') is distinct from 'end_turn'`)
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${open.n} sessions still busy`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Event accepted (POST answered) → model request received, one idle session after another. */
async function dispatchLatency(platform: Platform, count: number) {
  const sessions = await newSessions(platform, count);
  const fromSend: number[] = [];
  const fromAccept: number[] = [];
  for (const id of sessions) {
    const seen = platform.fake.requests.length;
    const sent = now();
    await platform.request("POST", `/v1/sessions/${id}/events`, say("hi"));
    const accepted = now();
    const request = await platform.fake.waitForRequest(seen + 1, 10_000);
    fromSend.push(request.receivedAt - sent);
    fromAccept.push(request.receivedAt - accepted);
    await waitForIdleWakes(platform, [id], 10_000);
  }
  return { fromAccepted: summarize(fromAccept), fromSent: summarize(fromSend) };
}

/** Model response finished → next model request received, for a long tool loop in one session. */
async function durableToolStep(platform: Platform, steps: number) {
  const [id] = await newSessions(platform, 1);
  if (!id) throw new Error("no session");
  const first = platform.fake.requests.length;
  await platform.request("POST", `/v1/sessions/${id}/events`, say(`steps:${steps}`));
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

/** Many sessions running tool loops at once: committed durable tool steps per second. */
async function toolStepThroughput(platform: Platform, sessions: number, steps: number) {
  const ids = await newSessions(platform, sessions);
  const started = now();
  await Promise.all(
    ids.map((id) => platform.request("POST", `/v1/sessions/${id}/events`, say(`steps:${steps}`))),
  );
  await waitForIdleWakes(platform, ids, 300_000);
  const seconds = (now() - started) / 1000;
  return {
    sessions,
    stepsPerSession: steps,
    seconds: round(seconds),
    stepsPerSecond: round((sessions * steps) / seconds),
  };
}

/** Many sessions with one plain turn each: wakes completed per second. */
async function wakeThroughput(platform: Platform, sessions: number) {
  const ids = await newSessions(platform, sessions);
  const started = now();
  await Promise.all(ids.map((id) => platform.request("POST", `/v1/sessions/${id}/events`, say("hi"))));
  await waitForIdleWakes(platform, ids, 300_000);
  const seconds = (now() - started) / 1000;
  return { sessions, seconds: round(seconds), wakesPerSecond: round(sessions / seconds) };
}

export interface SessionBenchResult {
  dispatchMs: { fromAccepted: LatencySummary; fromSent: LatencySummary };
  durableToolStepMs: LatencySummary;
  historyBytesPerStep: { first10: number; last10: number };
  toolSteps: Awaited<ReturnType<typeof toolStepThroughput>>;
  wakes: {
    oneWorker: Awaited<ReturnType<typeof wakeThroughput>>;
    twoWorkers: Awaited<ReturnType<typeof wakeThroughput>>;
  };
}

export async function runSessionBench(
  options: { quick?: boolean; run?: RunMode } = {},
): Promise<SessionBenchResult> {
  const scale = options.quick ? 0.2 : 1;
  const n = (value: number) => Math.max(5, Math.round(value * scale));
  const workerEnv = { WORKER_SLOTS: "32", MAX_MODEL_REQUESTS_PER_WAKE: "1000" };

  const one = await Platform.start({ workers: 1, script: benchScript(), workerEnv, run: options.run });
  let result: Omit<SessionBenchResult, "wakes"> & { wakes: Partial<SessionBenchResult["wakes"]> };
  try {
    await wakeThroughput(one, 20); // warm-up: connections, JIT, prepared plans
    const dispatchMs = await dispatchLatency(one, n(200));
    const loop = await durableToolStep(one, n(200));
    const toolSteps = await toolStepThroughput(one, n(50), 40);
    const oneWorker = await wakeThroughput(one, n(500));
    result = {
      dispatchMs,
      durableToolStepMs: loop.step,
      historyBytesPerStep: loop.historyBytesPerStep,
      toolSteps,
      wakes: { oneWorker },
    };
  } finally {
    await one.stop();
  }
  const two = await Platform.start({ workers: 2, script: benchScript(), workerEnv, run: options.run });
  try {
    await wakeThroughput(two, 20);
    result.wakes.twoWorkers = await wakeThroughput(two, n(500));
  } finally {
    await two.stop();
  }
  return result as SessionBenchResult;
}
