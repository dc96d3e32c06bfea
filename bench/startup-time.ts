import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  createTestDatabase,
  entryArgs,
  type RunMode,
  removeLabelled,
  requireDocker,
  summarize,
  testNatsUrl,
} from "@wakeloop/testing";

// npm run build && npx tsx bench/startup-time.ts [--runs 5]
// Start-up time of each service, from source (tsx) and compiled (dist/): from spawning `node` to its
// health endpoint's GET /readyz answering 200 (Postgres, NATS and the app's own checks passed),
// median of --runs starts, one at a time, against a fresh database. Prints a Markdown table.

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const RUNS = Number(values.runs);
const APPS = ["gateway", "orchestrator", "harness-worker", "sandbox-runner", "memory-retrieval"] as const;
const MODES: RunMode[] = ["source", "dist"];
const ROOT = join(import.meta.dirname, "..");
const READY_TIMEOUT_MS = 60_000;
const RUNNER_LABEL = "wakeloop.runner"; // apps/sandbox-runner/src/labels.ts

function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function readyz(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
  } catch {
    return false; // not listening yet
  }
}

/** Milliseconds from spawn to a 200 from /readyz; the process is then stopped and awaited. */
async function startOnce(app: string, mode: RunMode, env: Record<string, string>): Promise<number> {
  const healthPort = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, entryArgs(`apps/${app}/src/main.ts`, mode, ROOT), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env, HEALTH_PORT: String(healthPort), METRICS_PORT: "0" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    while (!(await readyz(healthPort))) {
      if (child.exitCode !== null) throw new Error(`${app} (${mode}) exited ${child.exitCode}: ${stderr}`);
      if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`${app} (${mode}) never ready`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return performance.now() - started;
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

const database = await createTestDatabase();
const runnerId = `startup${randomBytes(4).toString("hex")}`;
const stateDir = await mkdtemp(join(tmpdir(), "wl-startup-sandbox-"));
const env = {
  DATABASE_URL: database.appUrl,
  NATS_URL: testNatsUrl(),
  NATS_ALLOW_ANONYMOUS: "true",
  WL_SUBJECT_PREFIX: `startup_${randomBytes(4).toString("hex")}`,
  PORT: "0",
  LOG_LEVEL: "warn",
  PROVIDER_CREDENTIAL_KEYS: `startup:${randomBytes(32).toString("base64")}`,
  SANDBOX_RUNNER_ID: runnerId,
  SANDBOX_STATE_DIR: stateDir,
};
const rows: string[] = [];
try {
  for (const app of APPS) {
    const medians: number[] = [];
    for (const mode of MODES) {
      const samples: number[] = [];
      for (let run = 0; run < RUNS; run++) samples.push(await startOnce(app, mode, env));
      medians.push(summarize(samples).p50);
    }
    const [source = 0, dist = 0] = medians;
    rows.push(`| \`${app}\` | ${Math.round(source)} | ${Math.round(dist)} |`);
  }
} finally {
  await removeLabelled(await requireDocker(), { [RUNNER_LABEL]: runnerId });
  await rm(stateDir, { recursive: true, force: true });
  await database.drop();
}
console.log(`start-up to /readyz 200, median of ${RUNS} (ms)\n`);
console.log("| service | tsx (source) | compiled (dist) |\n| --- | ---: | ---: |");
console.log(rows.join("\n"));
