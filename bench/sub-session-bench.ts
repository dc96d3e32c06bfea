import { pathToFileURL } from "node:url";
import type { SessionEvent } from "@wakeloop/contracts";
import { delegatingTurn, type LatencySummary, Platform, round2 as round, summarize } from "@wakeloop/testing";
import { BENCH_APP_ENV, newSessions, say, waitForIdleWakes } from "./bench-sessions";

/*
 * Sub-sessions (issue #11): a parent spawns 10 children in one step, waits for them, and ends its
 * turn with their results; the fake model answers at once (zero model latency), so what is measured is
 * the platform: spawning, waking 10 sessions, their report, the orchestrator telling the parent once
 * per child and answering its wait.   npx tsx bench/sub-session-bench.ts [parents]
 * Times are the committed events' own timestamps (Postgres): from the parent's first
 * `session.child_created` (the spawn) to the wait's answer (all results on the parent), and on to the
 * parent's end of turn. Parents run one after another, on 2 harness workers.
 */

export interface SubSessionBenchOptions {
  parents?: number;
  children?: number;
}

export interface SubSessionBenchResult {
  parents: number;
  childrenPerParent: number;
  workers: number;
  /** First child created → the wait answered with every child's result. */
  spawnToAllResultsMs: LatencySummary;
  /** First child created → the parent idle with `end_turn` after reading the results. */
  spawnToParentDoneMs: LatencySummary;
}

const at = (event: SessionEvent | undefined) => (event ? Date.parse(event.created_at) : Number.NaN);

export async function runSubSessionBench(
  options: SubSessionBenchOptions = {},
): Promise<SubSessionBenchResult> {
  const parents = options.parents ?? 20;
  const children = options.children ?? 10;
  const workers = 2;
  const platform = await Platform.start({ workers, appEnv: BENCH_APP_ENV });
  try {
    platform.fake.setScript({ defaultTurn: delegatingTurn });
    const tasks = Array.from({ length: children }, (_, index) => `t${index}`).join(", ");
    const toResults: number[] = [];
    const toDone: number[] = [];
    for (const parent of await newSessions(platform, parents)) {
      await say(platform, parent, `delegate: ${tasks}`);
      await waitForIdleWakes(platform, [parent], 120_000);
      const events = await platform.events(parent);
      const spawned = at(events.find((event) => event.type === "session.child_created"));
      const answered = events.find((event) => event.type === "user.custom_tool_result");
      const answer = answered?.type === "user.custom_tool_result" ? JSON.stringify(answered.content) : "";
      if ((answer.match(/\\"status\\":\\"completed\\"/g) ?? []).length !== children) {
        throw new Error(`parent ${parent} did not get ${children} completed results: ${answer}`);
      }
      toResults.push(at(answered) - spawned);
      toDone.push(at(events.findLast((event) => event.type === "session.status_idle")) - spawned);
    }
    return {
      parents,
      childrenPerParent: children,
      workers,
      spawnToAllResultsMs: summarize(toResults),
      spawnToParentDoneMs: summarize(toDone),
    };
  } finally {
    await platform.stop();
  }
}

export function subSessionTable(result: SubSessionBenchResult): string {
  const row = (name: string, s: LatencySummary) =>
    `| ${name} | ${s.n} | ${round(s.p50)} | ${round(s.p95)} | ${round(s.p99)} | ${round(s.max)} |`;
  return [
    `parent with ${result.childrenPerParent} children, zero model latency, ${result.workers} workers`,
    "| series (ms) | n | p50 | p95 | p99 | max |",
    "|---|---|---|---|---|---|",
    row("spawn → all results", result.spawnToAllResultsMs),
    row("spawn → parent done", result.spawnToParentDoneMs),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const parents = process.argv[2] ? Number(process.argv[2]) : undefined;
  const result = await runSubSessionBench(parents ? { parents } : {});
  console.log(JSON.stringify(result, null, 2));
  console.log(subSessionTable(result));
}
