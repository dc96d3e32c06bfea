import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { entryArgs, type LatencySummary, Platform, type RunMode, summarize } from "@wakeloop/testing";

// npm run build && npx tsx bench/cli-bench.ts [--runs 10]
// What a person waits for at the `wakeloop` prompt, source (tsx) against compiled (dist, what
// `npx wakeloop` runs): wall time of the whole process for `--version` (start-up alone), `sessions list
// --json` (start-up + one API call) and `chat <agent> -m hi --json` (start-up, a new session, one turn
// with the fake model answering at once, the event stream until idle). The platform runs compiled.
// Writes bench/results/cli-<timestamp>.json and prints a table.

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" } } });
const RUNS = Number(values.runs);
const ROOT = join(import.meta.dirname, "..");
const MODES: RunMode[] = ["source", "dist"];
const run = promisify(execFile);

const platform = await Platform.start({ workers: 1, run: "dist", script: { defaultTurn: { text: "ok" } } });
const home = await mkdtemp(join(tmpdir(), "wl-cli-bench-"));
const results: Record<string, Record<string, LatencySummary>> = {};
try {
  const agent = await platform.request("POST", "/v1/agents", { name: "bench", model: platform.fakeModel() });
  const commands: Record<string, string[]> = {
    "--version": ["--version"],
    "sessions list --json": ["sessions", "list", "--json"],
    "chat -m hi --json (one turn)": ["chat", agent.body.id as string, "-m", "hi", "--json"],
  };
  const env = {
    PATH: process.env.PATH ?? "",
    XDG_CONFIG_HOME: home,
    WAKELOOP_URL: platform.baseUrl,
    WAKELOOP_API_KEY: platform.apiKey,
  };
  for (const [name, args] of Object.entries(commands)) {
    results[name] = {};
    for (const mode of MODES) {
      const cli = entryArgs("packages/cli/src/main.ts", mode, ROOT);
      const samples: number[] = [];
      for (let index = 0; index < RUNS; index++) {
        const started = performance.now();
        await run(process.execPath, [...cli, ...args], { cwd: ROOT, env });
        samples.push(performance.now() - started);
      }
      (results[name] as Record<string, LatencySummary>)[mode] = summarize(samples);
    }
  }
} finally {
  await platform.stop();
  await rm(home, { recursive: true, force: true });
}

const out = join(ROOT, "bench", "results");
await mkdir(out, { recursive: true });
const file = join(out, `cli-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
await writeFile(file, `${JSON.stringify({ runs: RUNS, results }, null, 2)}\n`);
console.log(`wakeloop CLI, wall time of the process, ${RUNS} runs each (ms); ${file}\n`);
console.log(
  "| command | tsx p50 | tsx p95 | compiled p50 | compiled p95 |\n| --- | ---: | ---: | ---: | ---: |",
);
for (const [name, byMode] of Object.entries(results)) {
  const { source, dist } = byMode;
  console.log(
    `| \`${name}\` | ${Math.round(source?.p50 ?? 0)} | ${Math.round(source?.p95 ?? 0)} | ${Math.round(dist?.p50 ?? 0)} | ${Math.round(dist?.p95 ?? 0)} |`,
  );
}
