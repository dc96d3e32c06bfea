import { pathToFileURL } from "node:url";
import type { SandboxCodeLanguage, SandboxToolName } from "@wakeloop/contracts";
import { type LatencySummary, summarize } from "@wakeloop/testing";
import { RunnerFixture } from "../src/testing/docker-fixture";
import { SessionDriver } from "../src/testing/session-driver";

/*
 * run_sandbox_code on one warm sandbox (issue #13):   npx tsx apps/sandbox-runner/bench/sandbox-code-bench.ts [runs]
 * A trivial program per language through the runner's tool path (validation, exec channel, output
 * formatting), next to shell_run `true` on the same sandbox: the difference is the interpreter's start.
 */

const PROGRAMS: Record<SandboxCodeLanguage, string> = {
  javascript: "console.log(6 * 7)",
  python: "print(6 * 7)",
  bash: "echo $((6 * 7))",
};

export type SandboxCodeBench = Record<string, LatencySummary>;

export async function runSandboxCodeBench(options: { runs?: number } = {}): Promise<SandboxCodeBench> {
  const runs = options.runs ?? 50;
  const fixture = await RunnerFixture.create();
  try {
    const session = new SessionDriver(await fixture.manager());
    await session.ensure();
    const timed = async (tool: SandboxToolName, input: Record<string, unknown>) => {
      for (let index = 0; index < 5; index++) await session.run(tool, input); // warm-up
      const samples: number[] = [];
      for (let index = 0; index < runs; index++) {
        const start = performance.now();
        const outcome = await session.run(tool, input);
        samples.push(performance.now() - start);
        if (outcome.is_error) throw new Error(`${tool} failed: ${outcome.text}`);
      }
      return summarize(samples);
    };
    const result: SandboxCodeBench = { shell_run_true_ms: await timed("shell_run", { command: "true" }) };
    for (const [language, code] of Object.entries(PROGRAMS)) {
      result[`run_sandbox_code_${language}_ms`] = await timed("run_sandbox_code", { language, code });
    }
    return result;
  } finally {
    await fixture.cleanup();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runSandboxCodeBench({ runs: Number(process.argv[2] ?? "50") });
  console.log(JSON.stringify(result, null, 2));
  console.table(result);
  process.exit(0);
}
