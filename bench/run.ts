import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { PhaseSummaries, ProcessSummary } from "../apps/memory-retrieval/bench/retrieval-bench";
import { runAgentSqlBench } from "../packages/db/bench/agent-sql-bench";
import { runAppendBench } from "../packages/db/bench/append-bench";
import { runNavigationBench } from "../packages/db/bench/navigation-bench";
import { runOutcomeBench } from "../packages/db/bench/outcome-bench";
import { runConcurrencyBench } from "./concurrency-bench";
import { runMachineFloor } from "./machine-floor";
import { runModelHttpBench } from "./model-http-bench";
import { runPromptCacheBench } from "./prompt-cache-bench";
import { runRequestBuildBench } from "./request-build-bench";
import { runScheduleBench } from "./schedule-bench";
import { runSessionBench } from "./session-bench";
import { runStreamingBench } from "./streaming-bench";
import { runSubSessionBench } from "./sub-session-bench";
import { FIRST_TURN_TARGET, runToolSearchBench } from "./tool-search-bench";
import { runWebBench } from "./web-bench";

// npm run bench [-- --quick] [-- --only session,streaming,append,sandbox,metrics,schedule,navigation,outcomes,memory,web,agentsql,subsessions,retrieval,agenttools,browser,resources,mcp,requests,modelhttp,promptcache,compaction,toolsearch]; `--only console`
// (not in the default set: it needs Chromium) measures the web console's live timeline (console-bench.ts).
// `browser` (the browser tools in the sandbox image with Chromium, browser-bench.ts) needs that image.
// `session` is the platform end to end, after the machine's floor (machine-floor.ts: a Postgres
// commit, a JetStream ack and a JSON parse, to read the run against its machine): zero-latency loops
// and dispatch (session-bench.ts), then the I/O-bound load of issue #9, one worker and two
// (concurrency-bench.ts); with `--provider anthropic` its agents speak the Anthropic protocol to the
// fake model. Each figure with a target in the issue is marked met or not. `requests` times the
// encoding of one Anthropic request body (request-build-bench.ts); `modelhttp` the CPU of one streamed
// model request, client and fake model apart (model-http-bench.ts). `streaming` times a token from the
// fake model to an SSE client, live (deltas) and as before (with the stored agent.message), in one run
// (streaming-bench.ts; `--provider` applies).
// `promptcache` counts issue #29's prompt-caching figures for a 20-step tool session, caching off
// (before) and on (after) in one run (prompt-cache-bench.ts).
// `compaction` runs a 500-turn session with large tool outputs through the harness's context code
// without and with context compaction (apps/harness-worker/bench/compaction-bench.ts).
// `toolsearch` counts the input tokens of a default agent's one-line first turn before and after
// tool search (tool-search-bench.ts).
// The services run compiled, as in production: `npm run bench` builds them first (`npm run build`).
// Writes bench/results/<timestamp>.json and latest.json, and prints a table. Medians and tails
// come from one run on one machine: compare ratios within a run, not absolute numbers across runs.

// Postgres over its Unix socket when it has one here, as infra/up.sh runs it (a round trip costs about
// half of one over loopback TCP). WL_TEST_PG_URL chooses another server.
if (process.env.WL_TEST_PG_URL === undefined && existsSync("/var/run/postgresql/.s.PGSQL.5432"))
  process.env.WL_TEST_PG_URL = "postgres://postgres@localhost/postgres?host=/var/run/postgresql";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    // The wire protocol the session bench's agents speak to the fake model: openai_compatible or anthropic.
    provider: { type: "string", default: "openai_compatible" },
    only: {
      type: "string",
      default:
        "session,streaming,append,sandbox,metrics,schedule,navigation,outcomes,memory,web,agentsql,subsessions,retrieval,agenttools,browser,resources,mcp,requests,modelhttp,promptcache,compaction,toolsearch",
    },
  },
});
const only = new Set(values.only.split(","));
const provider = values.provider;
if (provider !== "openai_compatible" && provider !== "anthropic")
  throw new Error(`--provider must be openai_compatible or anthropic, not ${provider}`);
const results: Record<string, unknown> = { startedAt: new Date().toISOString(), quick: values.quick };

type Row = [measure: string, value: string, p95: string, p99: string, target: string, met: string];
const rows: Row[] = [];
const ms = (value: number) => value.toFixed(2);
const mark = (met: boolean | undefined) => (met === undefined ? "" : met ? "pass" : "FAIL");
type Summary = { p50: number; p95: number; p99: number };
/** A latency row; with `limits`, its target is `p50 ≤ a / p99 ≤ b` and it is marked met or not. */
const latency = (name: string, s: Summary, limits?: { p50?: number; p99?: number }) => {
  const target = [
    limits?.p50 === undefined ? "" : `p50 ≤ ${limits.p50}`,
    limits?.p99 === undefined ? "" : `p99 ≤ ${limits.p99}`,
  ]
    .filter(Boolean)
    .join(" / ");
  const met =
    limits === undefined ? undefined : s.p50 <= (limits.p50 ?? Infinity) && s.p99 <= (limits.p99 ?? Infinity);
  rows.push([name, ms(s.p50), ms(s.p95), ms(s.p99), target, mark(met)]);
};
const value = (name: string, shown: string, target = "", met?: boolean) =>
  rows.push([name, shown, "", "", target, mark(met)]);

if (only.has("session")) {
  // The machine's own floor first, so the platform's figures below can be read against this run's machine.
  const floor = await runMachineFloor({ iterations: values.quick ? 100 : 500 });
  results.machineFloor = floor;
  latency("machine floor: Postgres commit, two writes in one round trip (ms)", floor.postgresCommitMs);
  latency("machine floor: JetStream publish → ack (ms)", floor.jetstreamAckMs);
  latency(`machine floor: JSON.parse of ${Math.round(floor.jsonBytes / 1000)} kB (ms)`, floor.jsonParseMs);
  const session = await runSessionBench({ quick: values.quick, run: "dist", provider });
  results.session = session;
  const dispatch = { p50: 6, p99: 20 };
  latency("dispatch: event accepted → model request (ms)", session.dispatchMs.fromAccepted, dispatch);
  latency("dispatch: POST sent → model request (ms)", session.dispatchMs.fromSent);
  latency(
    "dispatch, two workers: accepted → model request (ms)",
    session.dispatchTwoWorkersMs.fromAccepted,
    dispatch,
  );
  latency("durable tool step, set_state (ms)", session.durableToolStepMs, { p50: 2, p99: 6 });
  const first = session.toolStepsFirstRound;
  const { stepsPerSecond, cpuMsPerStep } = session.toolSteps;
  value(
    "durable tool steps/s (concurrent sessions, one worker), first round after start",
    String(first.stepsPerSecond),
    "reported",
  );
  value(
    "durable tool steps/s, the same load again (steady state)",
    String(stepsPerSecond),
    "≥ 600 (stretch 1 000)",
    stepsPerSecond >= 600,
  );
  for (const [process, cpu] of Object.entries(cpuMsPerStep))
    value(`  CPU ms per step, steady state: ${process}`, ms(cpu), "reported");
  const bytes = session.historyBytesPerStep;
  value(
    "history bytes per step, steps 1–10 → last 10",
    `${bytes.first10} → ${bytes.last10}`,
    "constant (±10 %)",
    Math.abs(bytes.last10 - bytes.first10) <= bytes.first10 * 0.1,
  );
  value("wakes/s, zero latency, one worker", String(session.wakes.oneWorker.wakesPerSecond));
  value("wakes/s, zero latency, two workers", String(session.wakes.twoWorkers.wakesPerSecond));

  const concurrency = await runConcurrencyBench({ quick: values.quick, run: "dist" });
  results.concurrency = concurrency;
  for (const run of [concurrency.oneWorker, concurrency.twoWorkers]) {
    const label = `${run.sessions} sessions × ${run.stepsPerSession} steps, model ${run.modelLatencyMs / 1000} s, ${run.workers} worker${run.workers > 1 ? "s" : ""}`;
    value(label, "");
    latency("  overhead beyond the model (ms)", run.overheadMs, { p99: 50 });
    latency("  queue wait, wake created → running (ms)", run.queueWaitMs);
    latency("    created → job published (orchestrator)", run.queuedToPublishedMs);
    latency("    job published → running (worker)", run.publishedToRunningMs);
    value(
      "  model requests in flight at once (peak)",
      String(run.peakModelRequestsInFlight),
      `= ${run.sessions} (no queueing)`,
      run.peakModelRequestsInFlight >= run.sessions,
    );
    value("  wall time (s) / wakes/s", `${run.wallSeconds} / ${run.wakesPerSecond}`);
    for (const [worker, cpu] of Object.entries(run.workerCpuPercent))
      value(
        `  ${worker}: CPU % of a core / peak RSS MB`,
        `${cpu} / ${run.workerPeakRssMb[worker] ?? "?"}`,
        "reported",
      );
    value("  times a worker held back new wakes", String(run.workerHoldBacks));
  }
  value(
    "wakes/s, two workers ÷ one, same load",
    String(concurrency.twoOverOne),
    "≥ 1.8",
    concurrency.twoOverOne >= 1.8,
  );
}

if (only.has("streaming")) {
  const streaming = await runStreamingBench({ tokens: values.quick ? 100 : 500, run: "dist", provider });
  results.streaming = streaming;
  const target = { p50: 20, p99: 60 };
  value(`live streaming, ${streaming.tokens} tokens 10 ms apart (${streaming.provider})`, "");
  latency(
    "  before: token sent → client has it in the stored agent.message (ms)",
    streaming.finalMessageMs,
    target,
  );
  latency("  after: token sent → client has it in a live delta (ms)", streaming.deltaMs, target);
  value("  delta messages per token (coalescing)", String(streaming.deltasPerToken), "reported");
}

if (only.has("append")) {
  const append = await runAppendBench(values.quick ? { appendsPerWriter: 100 } : {});
  results.append = append;
  latency("append, 1 session 1 writer (ms)", append.singleSession.latencyMs);
  value(
    "append events/s: 1 session / 8 sessions",
    `${append.singleSession.eventsPerSecond} / ${append.parallelSessions.eventsPerSecond}`,
  );
  const { oneCall, transaction } = append.stateStep;
  latency("state-tool step commit, one statement (ms)", oneCall.latencyMs);
  latency("state-tool step commit, as a transaction (ms)", transaction.latencyMs);
  value(
    "state-tool step commit: round trips, one statement / transaction",
    `${oneCall.roundTrips} / ${transaction.roundTrips}`,
    "1",
    oneCall.roundTrips === 1,
  );
  const start = append.wakeStart;
  latency("wake start reads, one call (ms)", start.oneCall.latencyMs);
  latency("wake start reads, lease + history + agent tools (ms)", start.separate.latencyMs);
  value(
    "wake start reads: round trips, one call / separate",
    `${start.oneCall.roundTrips} / ${start.separate.roundTrips}`,
    "1",
    start.oneCall.roundTrips === 1,
  );
}

if (only.has("navigation")) {
  const navigation = await runNavigationBench(values.quick ? { sessions: 500, iterations: 100 } : {});
  results.navigation = navigation;
  for (const [name, summary] of Object.entries(navigation.latencyMs)) {
    latency(`navigation, ${navigation.sessions} sessions: ${name} (ms)`, summary);
  }
}

if (only.has("outcomes")) {
  const outcomes = await runOutcomeBench(values.quick ? { sessions: 50, iterations: 100 } : {});
  results.outcomes = outcomes;
  for (const [name, summary] of Object.entries(outcomes.latencyMs)) {
    latency(
      `outcomes, ${outcomes.sessions} sessions × ${outcomes.attemptsPerOutcome} attempts: ${name} (ms)`,
      summary,
    );
  }
}

if (only.has("agentsql")) {
  const agentSql = await runAgentSqlBench(values.quick ? { iterations: 100 } : {});
  results.agentSql = agentSql;
  for (const [name, summary] of Object.entries(agentSql.latencyMs))
    latency(`agent SQL: ${name} (ms)`, summary);
  const { parallel } = agentSql;
  latency(`agent SQL: INSERT, ${parallel.agents} agents side by side (ms)`, parallel.latencyMs);
  value(
    `agent SQL: calls/s, ${parallel.agents} agents on 4 connections`,
    String(parallel.callsPerSecond),
    "reported",
  );
}

if (only.has("sandbox")) {
  const { runSandboxBench } = await import("../apps/sandbox-runner/bench/sandbox-bench");
  const sandbox = await runSandboxBench(values.quick ? { coldRuns: 5, warmRuns: 10, roundTrips: 200 } : {});
  results.sandbox = sandbox;
  for (const [name, summary] of Object.entries(sandbox)) latency(`sandbox: ${name} (ms)`, summary);
}

if (only.has("resources")) {
  const { runSubstrateBench } = await import("../apps/sandbox-runner/bench/substrate-bench");
  const resources = await runSubstrateBench(values.quick ? { files: 50, iterations: 50 } : {});
  results.resources = resources;
  for (const [name, summary] of Object.entries(resources.latencyMs))
    latency(`resources: ${name} (ms)`, summary);
}

if (only.has("metrics")) {
  const { runMetricsBench } = await import("../apps/harness-worker/bench/metrics-bench");
  const metrics = await runMetricsBench(values.quick ? { ops: 20_000, scrapes: 10 } : {});
  results.metrics = metrics;
  value("metrics: one model request recorded (ns)", String(metrics.modelRequestNs), "reported");
  value(
    "  with attribute objects built per call (ns)",
    String(metrics.modelRequestFreshAttributesNs),
    "reported",
  );
  value("metrics: one tool call recorded (ns)", String(metrics.toolCallNs), "reported");
  latency(`metrics: GET /metrics, ${metrics.series} models + ${metrics.series} tools (ms)`, metrics.scrapeMs);
}

if (only.has("schedule")) {
  const schedule = await runScheduleBench(values.quick ? { tasks: 1_000 } : {});
  results.schedule = schedule;
  for (const run of [schedule.oneReplica, schedule.twoReplicas]) {
    const once = run.firings === run.tasks && run.distinctTasks === run.tasks && run.sessions === run.tasks;
    value(
      `${run.tasks} tasks due at once, ${run.replicas} orchestrator${run.replicas > 1 ? "s" : ""}: all fired after (ms)`,
      `${ms(run.allFiredAfterMs)} (${run.firingsPerSecond}/s)`,
      "each once",
      once,
    );
  }
}

if (only.has("console")) {
  const { runConsoleBench } = await import("./console-bench");
  const console_ = await runConsoleBench({ quick: values.quick });
  results.console = console_;
  latency("console: event accepted → row in the timeline (ms)", console_.eventToTimelineMs);
  latency(
    `console: open a session of ${console_.historyEvents} events → all shown (ms)`,
    console_.openSessionMs,
  );
  value(
    "console: script bytes / brotli",
    `${console_.bundleBytes.script} / ${console_.bundleBytes.scriptBrotli}`,
    "reported",
  );
}

if (only.has("browser")) {
  const { runBrowserBench } = await import("../apps/sandbox-runner/bench/browser-bench");
  const browser = await runBrowserBench(values.quick ? { coldRuns: 3, warmRuns: 20 } : {});
  results.browser = browser;
  latency("browser: cold start, first navigate in a fresh sandbox (ms)", browser.cold_first_navigate_ms);
  latency("browser: warm navigate (ms)", browser.warm_navigate_ms);
  latency("browser: warm extract_text (ms)", browser.warm_extract_text_ms);
  latency("browser: warm viewport screenshot (ms)", browser.warm_screenshot_ms);
}

if (only.has("requests")) {
  const requests = runRequestBuildBench(values.quick ? { iterations: 200 } : {});
  results.requests = requests;
  const label = `${requests.turns}-turn history, ${requests.tools} tools, ${requests.bodyBytes} bytes`;
  latency(`Anthropic request body, SDK stringify, ${label} (ms)`, requests.sdkStringifyMs);
  latency(`Anthropic request body, cached bytes, ${label} (ms)`, requests.cachedBytesMs);
}

if (only.has("compaction")) {
  const { runCompactionBench } = await import("../apps/harness-worker/bench/compaction-bench");
  const compaction = runCompactionBench(values.quick ? { samples: 5 } : {});
  results.compaction = compaction;
  const limit = compaction.threshold + compaction.turnTokens;
  for (const [name, variant] of [
    ["before (no context_management)", compaction.before],
    ["after (threshold 40 000)", compaction.after],
  ] as const) {
    value(
      `compaction ${name}: ${compaction.turns}-turn session, largest request (tokens, ${variant.compactions} compactions)`,
      String(variant.maxRequestTokens),
      `≤ ${limit} (threshold + one turn)`,
      variant.maxRequestTokens <= limit,
    );
    const first = variant.wakeStart[0];
    for (const point of variant.wakeStart) {
      latency(`compaction ${name}: wake start at ${point.turns} turns (ms)`, point.ms);
      value(`  first request body at ${point.turns} turns (bytes)`, String(point.bytes));
    }
    const last = variant.wakeStart.at(-1);
    if (first !== undefined && last !== undefined) {
      value(
        `  wake start flat, ${last.turns} vs ${first.turns} turns: p50 ms ratio`,
        (last.ms.p50 / first.ms.p50).toFixed(2),
        "≤ 2",
        last.ms.p50 <= 2 * first.ms.p50,
      );
      const middle = variant.wakeStart[1] ?? first;
      value(
        `  request bytes flat, ${last.turns} vs ${middle.turns} turns: ratio`,
        (last.bytes / middle.bytes).toFixed(2),
        "≤ 1.25",
        last.bytes <= 1.25 * middle.bytes,
      );
    }
  }
}
if (only.has("toolsearch")) {
  // Counted, not timed (tool-search-bench.ts says how): a one-line first turn of a default agent.
  const firstTurns = runToolSearchBench();
  results.toolSearch = firstTurns;
  for (const row of firstTurns) {
    value(
      `first turn input tokens, default agent, ${row.provider}, ${row.situation}: before (${row.before.tools} tools) → after (${row.after.tools} tools)`,
      `${row.before.inputTokens} → ${row.after.inputTokens}`,
      `after ≤ ${FIRST_TURN_TARGET}`,
      row.after.inputTokens <= FIRST_TURN_TARGET,
    );
  }
}

if (only.has("modelhttp")) {
  const modelHttp = await runModelHttpBench(values.quick ? { batches: 4 } : {});
  results.modelHttp = modelHttp;
  const label = `${modelHttp.turns}-turn history, per request`;
  latency(`model request CPU, client, ${label} (µs)`, modelHttp.clientCpuUs);
  latency(`model request CPU, fake model, ${label} (µs)`, modelHttp.fakeCpuUs);
}

if (only.has("promptcache")) {
  const cache = await runPromptCacheBench({ run: "dist" });
  results.promptCache = cache;
  const { before, after } = cache;
  const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
  const session = `${cache.steps}-step tool session, caching off → on`;
  value(
    `prompt cache: worst request's bytes equal to a prefix of the previous one, ${session} (off: the old member order)`,
    `${percent(before.minPrefixShareOldOrder)} → ${percent(after.minPrefixShare)}`,
    "≥ 95 %",
    after.minPrefixShare >= 0.95,
  );
  value(
    `prompt cache: cache-read share of input tokens, ${session}`,
    `${percent(before.cacheReadShare)} → ${percent(after.cacheReadShare)}`,
    "≥ 80 %",
    after.cacheReadShare >= 0.8,
  );
  value(
    `prompt cache: billed-equivalent input tokens (input + 1.25 × write + 0.1 × read), ${session}`,
    `${before.billedInputTokens} → ${after.billedInputTokens} (${cache.billedReduction.toFixed(1)}× lower)`,
    "≥ 5× lower",
    cache.billedReduction >= 5,
  );
}

if (only.has("web")) {
  const web = await runWebBench(values.quick ? { requests: 100 } : {});
  results.web = web;
  latency("web: plain fetch of a local article (ms)", web.plainFetchMs);
  latency("web: through the egress guard (ms)", web.guardedFetchMs);
  latency("web_fetch, JSON passed through (ms)", web.webFetchJsonMs);
  latency("web_fetch, HTML article → markdown (ms)", web.webFetchHtmlMs);
  value(
    "  web_fetch HTML overhead over plain fetch, p50 / p99 (ms)",
    `${ms(web.htmlOverheadMs.p50)} / ${ms(web.htmlOverheadMs.p99)}`,
    "reported",
  );
}

if (only.has("mcp")) {
  const { runMcpBench } = await import("../apps/harness-worker/bench/mcp-bench");
  const mcp = await runMcpBench(values.quick ? { calls: 100 } : {});
  results.mcp = mcp;
  latency("mcp: SDK client alone, echo tool (ms)", mcp.directMs);
  latency("mcp: worker path (egress guard, vault header, content) (ms)", mcp.workerMs);
  value(
    "  MCP call overhead over a direct call, p50 / p99 (ms)",
    `${ms(mcp.overheadMs.p50)} / ${ms(mcp.overheadMs.p99)}`,
    "reported",
  );
  const { runMcpStdioBench } = await import("../apps/sandbox-runner/bench/mcp-stdio-bench");
  const stdio = await runMcpStdioBench(values.quick ? { calls: 100 } : {});
  results.mcp_stdio = stdio;
  latency("mcp stdio: SDK client over docker exec -i, echo tool (ms)", stdio.directMs);
  latency("mcp stdio: platform path (NATS → runner → process stdin/stdout) (ms)", stdio.bridgedMs);
  latency("mcp stdio: one bus round trip to the runner, for scale (ms)", stdio.busRoundTripMs);
  value(
    "  MCP stdio call overhead over a direct pipe, p50 / p99 (ms)",
    `${ms(stdio.overheadMs.p50)} / ${ms(stdio.overheadMs.p99)}`,
    "reported",
  );
}

if (only.has("memory")) {
  const { runMemoryBench } = await import("../apps/memory-retrieval/bench/memory-bench");
  const memory = await runMemoryBench(values.quick ? { entries: 2_000, writes: 100, searches: 100 } : {});
  results.memory = memory;
  latency("memory_write through the service (ms)", memory.writeMs);
  latency(`memory_search over ${memory.entries} entries, full text (ms)`, memory.searchMs, {
    p50: 20,
    p99: 100,
  });
  latency(`memory_search over ${memory.entries} entries, trigram fallback (ms)`, memory.trigramSearchMs);
  latency(`recall at wake start over ${memory.entries} entries, top 5 with content (ms)`, memory.recallMs);
}

if (only.has("subsessions")) {
  const subs = await runSubSessionBench(values.quick ? { parents: 5 } : {});
  results.subsessions = subs;
  latency(
    `parent with ${subs.childrenPerParent} children: spawn → all results (ms)`,
    subs.spawnToAllResultsMs,
  );
  latency(
    `parent with ${subs.childrenPerParent} children: spawn → parent done (ms)`,
    subs.spawnToParentDoneMs,
  );
}

/** Where the searches above spent their time (phases of `rankedSearch`) and the bench process meanwhile. */
function searchBreakdown(phases: PhaseSummaries, watched: ProcessSummary | undefined) {
  for (const [phase, summary] of Object.entries(phases)) latency(`  phase ${phase} (ms)`, summary);
  if (watched === undefined) return;
  value(
    "  bench process: event-loop delay p99 / max; GC pauses, total / max (ms)",
    `${ms(watched.eventLoopDelayP99Ms)} / ${ms(watched.eventLoopDelayMaxMs)}; ${watched.gcPauses}, ${ms(watched.gcPauseTotalMs)} / ${ms(watched.gcPauseMaxMs)}`,
    "reported",
  );
}

if (only.has("retrieval")) {
  const { runRetrievalBench } = await import("../apps/memory-retrieval/bench/retrieval-bench");
  const retrieval = await runRetrievalBench(
    values.quick ? { events: 10_000, memoryEntries: 2_000, searches: 100, lagSamples: 50 } : {},
  );
  results.retrieval = retrieval;
  value(
    "retrieval: events indexed per second (batches of 2 000)",
    String(retrieval.indexedPerSecond),
    "reported",
  );
  const corpus = `${retrieval.events} session events + ${retrieval.memoryEntries} memory entries`;
  latency(`retrieval_search over ${corpus}, full text, 2 replicas (ms)`, retrieval.searchMs, {
    p50: 20,
    p99: 100,
  });
  searchBreakdown(retrieval.searchPhasesMs, retrieval.searchProcess);
  latency("retrieval: event commit → searchable (ms)", retrieval.commitToSearchableMs);
  if (retrieval.hybridSearchMs !== undefined) {
    value(
      "retrieval: vectors embedded per second (fake endpoint)",
      String(retrieval.embeddedPerSecond),
      "reported",
    );
    latency(`retrieval_search over ${corpus}, hybrid (ms)`, retrieval.hybridSearchMs, { p99: 100 });
    searchBreakdown(retrieval.hybridPhasesMs ?? {}, retrieval.hybridProcess);
  }
}

if (only.has("agenttools")) {
  const { runAgentToolsBench } = await import("./agent-tools-bench");
  const agentTools = await runAgentToolsBench(values.quick ? { iterations: 50, sandboxRuns: 10 } : {});
  results.agentTools = agentTools;
  for (const [name, summary] of Object.entries(agentTools.latencyMs))
    latency(`agent tools: ${name} (ms)`, summary);
}

const dir = join(import.meta.dirname, "results");
await mkdir(dir, { recursive: true });
const json = `${JSON.stringify(results, null, 2)}\n`;
await writeFile(join(dir, `${results.startedAt as string}.json`.replaceAll(":", "-")), json);
await writeFile(join(dir, "latest.json"), json);

const header: Row = ["measure", "p50 / value", "p95", "p99", "target", "met"];
const widths = header.map((_, column) =>
  Math.max(...[header, ...rows].map((row) => row[column]?.length ?? 0)),
);
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ");
console.log(`\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}`);
for (const row of rows) console.log(line(row));
console.log(`\nJSON: bench/results/latest.json`);
process.exit(0);
