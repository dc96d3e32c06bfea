import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runAppendBench } from "../packages/db/bench/append-bench";
import { runSessionBench } from "./session-bench";

// npm run bench [-- --quick] [-- --only session,append,sandbox]
// The services run compiled, as in production: `npm run bench` builds them first (`npm run build`).
// Writes bench/results/<timestamp>.json and latest.json, and prints a table. Medians and tails
// come from one run on one machine: compare ratios within a run, not absolute numbers across runs.

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string", default: "session,append,sandbox" },
  },
});
const only = new Set(values.only.split(","));
const results: Record<string, unknown> = { startedAt: new Date().toISOString(), quick: values.quick };

const rows: Array<[string, string, string, string, string]> = [];
const ms = (value: number) => value.toFixed(2);
const latency = (name: string, s: { p50: number; p95: number; p99: number }, target = "") =>
  rows.push([name, ms(s.p50), ms(s.p95), ms(s.p99), target]);

if (only.has("session")) {
  const session = await runSessionBench({ quick: values.quick, run: "dist" });
  results.session = session;
  latency("dispatch: event accepted → model request (ms)", session.dispatchMs.fromAccepted, "p50 ≤ 10");
  latency("dispatch: POST sent → model request (ms)", session.dispatchMs.fromSent);
  latency("durable tool step (ms)", session.durableToolStepMs, "p50 ≤ 3");
  rows.push([
    "durable tool steps/s (concurrent sessions)",
    String(session.toolSteps.stepsPerSecond),
    "",
    "",
    "≥ 1000",
  ]);
  rows.push([
    "history bytes per step, steps 1–10 → last 10",
    `${session.historyBytesPerStep.first10} → ${session.historyBytesPerStep.last10}`,
    "",
    "",
    "constant",
  ]);
  rows.push(["wakes/s, one worker", String(session.wakes.oneWorker.wakesPerSecond), "", "", ""]);
  rows.push(["wakes/s, two workers", String(session.wakes.twoWorkers.wakesPerSecond), "", "", ""]);
}

if (only.has("append")) {
  const append = await runAppendBench(values.quick ? { appendsPerWriter: 100 } : {});
  results.append = append;
  latency("append, 1 session 1 writer (ms)", append.singleSession.latencyMs);
  rows.push([
    "append events/s: 1 session / 8 sessions",
    `${append.singleSession.eventsPerSecond} / ${append.parallelSessions.eventsPerSecond}`,
    "",
    "",
    "",
  ]);
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

const header: [string, string, string, string, string] = ["measure", "p50 / value", "p95", "p99", "target"];
const widths = header.map((_, column) =>
  Math.max(...[header, ...rows].map((row) => row[column]?.length ?? 0)),
);
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ");
console.log(`\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}`);
for (const row of rows) console.log(line(row));
console.log(`\nJSON: bench/results/latest.json`);
process.exit(0);
