import { pathToFileURL } from "node:url";
import { createAgentCode, listAgentTools, readAgentCodeVersion, updateAgentCode } from "@wakeloop/db";
import {
  createTestDatabase,
  type LatencySummary,
  measureLatency,
  seedAgent,
  seedSession,
} from "@wakeloop/testing";
import { checkAgentCode } from "@wakeloop/tool-runtime";
import { readToolRun, toolProgram } from "../apps/harness-worker/src/tools/agent-tool-program";
import { RunnerFixture } from "../apps/sandbox-runner/src/testing/docker-fixture";
import { SessionDriver } from "../apps/sandbox-runner/src/testing/session-driver";

/*
 * Agent-defined tools (issue #13):   npx tsx bench/agent-tools-bench.ts [iterations]
 * - the save-time check of a ~2 KB tool (acorn parse, schema compile), a pure CPU cost per save;
 * - the store on a real Postgres: a save (create / update, one version each) and the wake-start read of
 *   an agent's 20 tools, which every wake pays beside its history;
 * - a call in one warm sandbox: the staged program (tool + 2 libraries, files written to /tmp, node
 *   started, result line read back) next to run_sandbox_code `console.log(42)`: the difference is the
 *   staging and the result protocol.
 */

export interface AgentToolsBenchResult {
  latencyMs: Record<string, LatencySummary>;
}

const SCHEMA = {
  type: "object",
  properties: { n: { type: "number" }, label: { type: "string" } },
  required: ["n"],
};
const TOOL_CODE = `const m = require("math_utils");\nconst rows = [];\nfor (let i = 0; i < args.n; i++) rows.push({ i, doubled: m.double(i), label: m.label(i) });\n${"// padding to a realistic size\n".repeat(50)}return { count: rows.length, last: rows.at(-1) };`;
const LIBRARIES = [
  {
    name: "math_utils",
    code: "exports.double = (n) => n * 2;\nexports.label = (n) => require('formatting').label(n);",
  },
  { name: "formatting", code: "module.exports = { label: (n) => 'n=' + n };" },
];

export async function runAgentToolsBench(options: { iterations?: number; sandboxRuns?: number } = {}) {
  const iterations = options.iterations ?? 200;
  const sandboxRuns = options.sandboxRuns ?? 30;
  const latencyMs: Record<string, LatencySummary> = {};

  latencyMs["save check: 2 KB tool (parse + schema)"] = await measureLatency(iterations * 5, async () => {
    const check = checkAgentCode({ kind: "tool", description: "rows", code: TOOL_CODE, schema: SCHEMA });
    if (!check.ok) throw new Error(check.message);
  });

  const testDb = await createTestDatabase({ max: 4 });
  try {
    const agent = await seedAgent(testDb.db);
    const session = await seedSession(testDb.db, agent);
    const scope = { tenantId: agent.tenantId, agentId: agent.agentId };
    const author = { sessionId: session.id, toolCallId: "sevt_bench" };
    const content = { description: "rows", code: TOOL_CODE, schema: SCHEMA, requires: ["math_utils"] };
    for (let index = 0; index < 20; index++) {
      await createAgentCode(testDb.appDb, scope, "tool", `tool_${index}`, content, author, { maxItems: 100 });
    }
    let created = 0;
    latencyMs["store: create_tool (head + version 1)"] = await measureLatency(iterations, async () => {
      created += 1;
      await createAgentCode(testDb.appDb, scope, "library", `lib_${created}`, content, author, {
        maxItems: 10_000,
      });
    });
    latencyMs["store: update_tool (new version)"] = await measureLatency(iterations, () =>
      updateAgentCode(testDb.appDb, scope, "tool", "tool_0", (current) => current, author),
    );
    latencyMs["store: wake-start read of 20 tools"] = await measureLatency(iterations, () =>
      listAgentTools(testDb.appDb, scope),
    );
    latencyMs["store: read the offered version at call"] = await measureLatency(iterations, () =>
      readAgentCodeVersion(testDb.appDb, scope, "tool", "tool_0", 1),
    );
  } finally {
    await testDb.drop();
  }

  const fixture = await RunnerFixture.create();
  try {
    const sandbox = new SessionDriver(await fixture.manager());
    await sandbox.ensure();
    latencyMs["sandbox: run_sandbox_code console.log(42)"] = await measureLatency(sandboxRuns, async () => {
      const outcome = await sandbox.run("run_sandbox_code", { code: "console.log(42)" });
      if (outcome.is_error) throw new Error(outcome.text);
    });
    latencyMs["sandbox: agent tool call (tool + 2 libraries staged)"] = await measureLatency(
      sandboxRuns,
      async () => {
        const marker = sandbox.nextCallId();
        const built = toolProgram({ marker, code: TOOL_CODE, libraries: LIBRARIES, args: { n: 100 } });
        if (!built.ok) throw new Error(built.message);
        const outcome = await sandbox.run("run_sandbox_code", { code: built.program }, { callId: marker });
        const run = readToolRun(outcome.text, marker);
        if (run === null || !run.ok) throw new Error(`tool failed: ${outcome.text}`);
      },
    );
  } finally {
    await fixture.cleanup();
  }
  return { latencyMs } satisfies AgentToolsBenchResult;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runAgentToolsBench({ iterations: Number(process.argv[2] ?? "200") });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
