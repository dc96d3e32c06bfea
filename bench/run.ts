import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runAppendBench } from "../packages/db/bench/append-bench";
import { runConcurrencyBench } from "./concurrency-bench";
import { runSessionBench } from "./session-bench";

// npm run bench [-- --quick] [-- --only session,append,sandbox]
// `session` is the platform end to end: zero-latency loops and dispatch (session-bench.ts), then the
// I/O-bound load of issue #9, one worker and two (concurrency-bench.ts). Each figure with a target in
// the issue is marked met or not.
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
    only: { type: "string", default: "session,append,sandbox" },
  },
});
const only = new Set(values.only.split(","));
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
  const session = await runSessionBench({ quick: values.quick, run: "dist" });
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
  const { stepsPerSecond, cpuMsPerStep } = session.toolSteps;
  value(
    "durable tool steps/s (concurrent sessions, one worker)",
    String(stepsPerSecond),
    "≥ 600 (stretch 1 000)",
    stepsPerSecond >= 600,
  );
  for (const [process, cpu] of Object.entries(cpuMsPerStep))
    value(`  CPU ms per step: ${process}`, ms(cpu), "reported");
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

if (only.has("append")) {
  const append = await runAppendBench(values.quick ? { appendsPerWriter: 100 } : {});
  results.append = append;
  latency("append, 1 session 1 writer (ms)", append.singleSession.latencyMs);
  value(
    "append events/s: 1 session / 8 sessions",
    `${append.singleSession.eventsPerSecond} / ${append.parallelSessions.eventsPerSecond}`,
  );
}

if (only.has("sandbox")) {
  const { runSandboxBench } = await import("../apps/sandbox-runner/bench/sandbox-bench");
  const sandbox = await runSandboxBench(values.quick ? { coldRuns: 5, warmRuns: 10, roundTrips: 200 } : {});
  results.sandbox = sandbox;
  for (const [name, summary] of Object.entries(sandbox)) latency(`sandbox: ${name} (ms)`, summary);
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
