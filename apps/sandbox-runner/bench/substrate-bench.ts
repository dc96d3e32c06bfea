import { pathToFileURL } from "node:url";
import { writeSubstrateFile } from "@wakeloop/db";
import { createTestDatabase, type LatencySummary, measureLatency, seedAgent } from "@wakeloop/testing";
import { SubstrateMirror } from "../src/substrate-mirror";
import { RunnerFixture, silent } from "../src/testing/docker-fixture";
import { SessionDriver } from "../src/testing/session-driver";

/*
 * The agent substrate (docs/resources.md) on a real Postgres (a throwaway database, the services' role)
 * and the local Docker: npx tsx apps/sandbox-runner/bench/substrate-bench.ts
 * One agent with `files` substrate files of 4 KiB, each with a few versions. Measured: the mirror sync
 * every `ensure` pays when nothing changed, a sync after one file changed, and the tools end to end on
 * a real sandbox (execute request → journal → channel/Postgres → result): compare, promote (version
 * written + mirror synced), list versions.
 */

export interface SubstrateBenchOptions {
  files?: number;
  versionsPerFile?: number;
  iterations?: number;
}

export interface SubstrateBenchResult {
  files: number;
  versionsPerFile: number;
  latencyMs: Record<string, LatencySummary>;
}

const limits = { maxFileBytes: 1024 * 1024, maxAgentBytes: 64 * 1024 * 1024 };
const api = { kind: "api" as const, session_id: null, wake_id: null, tool_call_id: null };
const content = (file: number, version: number) => `# file ${file} v${version}\n${"x".repeat(4_000)}\n`;

export async function runSubstrateBench(options: SubstrateBenchOptions = {}): Promise<SubstrateBenchResult> {
  const files = options.files ?? 200;
  const versionsPerFile = options.versionsPerFile ?? 5;
  const iterations = options.iterations ?? 200;
  const testDb = await createTestDatabase({ max: 10 });
  const fixture = await RunnerFixture.create();
  try {
    const agent = await seedAgent(testDb.db);
    const scope = { tenantId: agent.tenantId, agentId: agent.agentId };
    for (let version = 0; version < versionsPerFile; version++) {
      for (let file = 0; file < files; file++) {
        await writeSubstrateFile(
          testDb.appDb,
          scope,
          { path: `docs/file-${file}.md`, content: content(file, version), author: api },
          limits,
        );
      }
    }
    const mirror = new SubstrateMirror(testDb.appDb, limits, fixture.stateDir, silent, () => {});
    const manager = await fixture.manager({ substrates: mirror });
    const session = new SessionDriver(manager, undefined, undefined, agent.tenantId);
    await session.ensure(agent.agentId);
    await session.run("write", { path: "draft.md", content: content(0, 99) });
    const ok = async (tool: Parameters<SessionDriver["run"]>[0], input: unknown) => {
      const result = await session.run(tool, input);
      if (result.is_error) throw new Error(`${tool}: ${result.text}`);
    };
    let changed = versionsPerFile;
    return {
      files,
      versionsPerFile,
      latencyMs: {
        [`mirror sync, nothing changed (${files} files)`]: await measureLatency(iterations, () =>
          mirror.sync(scope),
        ),
        "one file written (new version) + mirror sync": await measureLatency(iterations, async () => {
          changed += 1;
          await writeSubstrateFile(
            testDb.appDb,
            scope,
            { path: "docs/file-0.md", content: content(0, changed), author: api },
            limits,
          );
          await mirror.sync(scope);
        }),
        "resources_compare_with_substrate (4 KiB, one line differs)": await measureLatency(iterations, () =>
          ok("resources_compare_with_substrate", { path: "docs/file-1.md", workspacePath: "draft.md" }),
        ),
        "resources_promote_to_substrate (version + mirror sync)": await measureLatency(iterations, () =>
          ok("resources_promote_to_substrate", { path: "promoted.md", workspacePath: "draft.md" }),
        ),
        [`resources_list_versions (${versionsPerFile} versions)`]: await measureLatency(iterations, () =>
          ok("resources_list_versions", { path: "docs/file-2.md" }),
        ),
      },
    };
  } finally {
    await fixture.cleanup();
    await testDb.drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(await runSubstrateBench(), null, 2));
}
