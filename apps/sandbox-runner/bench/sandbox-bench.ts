import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { type LatencySummary, summarize } from "@wakeloop/testing";
import { agentProgram } from "../src/agent-program";
import { provisionContainer } from "../src/provision";
import type { RunnerLog } from "../src/runner-log";
import { RunnerFixture, testEnvironment } from "../src/testing/docker-fixture";
import { SessionDriver } from "../src/testing/session-driver";

// Sandbox latencies on the local Docker (DESIGN §10): cold create+start, warm claim → first
// command, warm command round trip, 1 MiB file read. Run: npx tsx apps/sandbox-runner/bench/sandbox-bench.ts

export type Percentiles = LatencySummary;
export type SandboxBench = Record<string, Percentiles>;

const _silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as RunnerLog;

async function sample(
  n: number,
  run: () => Promise<unknown>,
  prepare?: () => Promise<unknown>,
): Promise<Percentiles> {
  const samples: number[] = [];
  for (let i = 0; i < n; i += 1) {
    await prepare?.();
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}

export async function runSandboxBench(
  options: { coldRuns?: number; warmRuns?: number; roundTrips?: number } = {},
): Promise<SandboxBench> {
  const coldRuns = options.coldRuns ?? 10;
  const warmRuns = options.warmRuns ?? 10;
  const roundTrips = options.roundTrips ?? 300;
  const fixture = await RunnerFixture.create();
  try {
    const environment = testEnvironment();
    const _agent = agentProgram();
    const result: SandboxBench = {};
    // Started first: its start-up removes every unbound container of this runner id.
    const manager = await fixture.manager();

    // Cold: volume + hardened container created, started, agent answering.
    const cold: Array<Awaited<ReturnType<typeof provisionContainer>>> = [];
    result.cold_create_start_ms = await sample(coldRuns, async () => {
      const provisioned = await provisionContainer(fixture.provisionDeps(), {
        name: `wl-${fixture.runnerId}-bench-${randomBytes(4).toString("hex")}`,
        labels: { "wakeloop.runner": fixture.runnerId },
        environment,
        substrate: null,
      });
      await provisioned.container.connect();
      cold.push(provisioned);
    });

    // Warm: claim a pooled container for a new session, then run its first command.
    const warmEnvironment = testEnvironment({ warm_pool_size: 2 });
    await new SessionDriver(manager, undefined, warmEnvironment).ensure();
    result.warm_claim_first_command_ms = await sample(
      warmRuns,
      async () => {
        const session = new SessionDriver(manager, undefined, warmEnvironment);
        const ensured = await session.ensure();
        if (ensured.provisioning !== "warm")
          throw new Error(`expected a warm claim, got ${ensured.provisioning}`);
        await session.run("shell_run", { command: "true" });
      },
      () => manager.pool.waitFull(),
    );

    // Round trips on one warm sandbox.
    const session = new SessionDriver(manager, undefined, environment);
    await session.ensure();
    const channel = cold[0]?.container.channel;
    if (!channel) throw new Error("no cold container to measure the channel on");
    result.agent_echo_round_trip_ms = await sample(roundTrips, () => channel.call("hello", {}));
    result.command_true_channel_ms = await sample(roundTrips, () =>
      channel.call("cmd.run", { argv: ["true"], command: "true", maxChars: 1_000 }),
    );
    result.shell_exec_true_execute_ms = await sample(roundTrips, () =>
      session.run("shell_exec", { command: "true" }),
    );
    result.shell_run_true_execute_ms = await sample(roundTrips, () =>
      session.run("shell_run", { command: "true" }),
    );

    // 1 MiB text file: agent read + transfer over the channel, and the read tool's first page.
    await channel.call("fs.write", { path: "mib.txt", content: `${"x".repeat(1023)}\n`.repeat(1024) });
    result.read_1mib_channel_ms = await sample(50, () => channel.call("fs.readRaw", { path: "mib.txt" }));
    await session.run("shell_run", {
      command: "head -c 1048576 /dev/zero | tr '\\0' y | fold -w 1023 > /workspace/mib.txt",
    });
    result.read_1mib_tool_first_page_ms = await sample(50, () => session.run("read", { path: "mib.txt" }));
    return result;
  } finally {
    await fixture.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await runSandboxBench(), null, 2));
}
