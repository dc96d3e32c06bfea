import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServerSpec } from "@wakeloop/contracts";
import { createGuardedFetch } from "@wakeloop/egress";
import { CredentialCipher, putVaultSecret } from "@wakeloop/provider-credentials";
import {
  createTestDatabase,
  type LatencySummary,
  measureLatency,
  round2,
  startMcpFixture,
} from "@wakeloop/testing";
import { WakeMcpClients } from "../src/tools/mcp/mcp-clients";

/*
 * MCP tool call overhead (issue #12):   npx tsx apps/harness-worker/bench/mcp-bench.ts [calls]
 * The same `echo` call to a local MCP server built with the official SDK, sequentially after a warm-up (`measureLatency`),
 * two ways on one connection each: the SDK client alone (the floor) and the worker's path (the egress
 * guard's fetch, the vault's credential header, the result turned into content). The overhead is the
 * difference; the wake's own machinery around a call (plan, ledger, commits) is the session bench's.
 */

export interface McpBenchResult {
  calls: number;
  directMs: LatencySummary;
  workerMs: LatencySummary;
  /** p50 and p99 of the worker's path minus those of the direct call. */
  overheadMs: { p50: number; p99: number };
}

export async function runMcpBench(options: { calls?: number } = {}): Promise<McpBenchResult> {
  const calls = options.calls ?? 500;
  const token = randomBytes(16).toString("hex");
  const fixture = await startMcpFixture({ token });
  const database = await createTestDatabase();
  const direct = new Client({ name: "bench", version: "1.0.0" });
  const cipher = new CredentialCipher([{ id: "bench", key: randomBytes(32) }]);
  const worker = new WakeMcpClients(
    {
      db: database.db,
      cipher,
      fetch: createGuardedFetch({
        policy: { allowedHosts: ["127.0.0.1"] },
        maxResponseBytes: 10_485_760,
        timeoutMs: 600_000,
        followRedirects: false,
      }),
      listTimeoutMs: 5_000,
    },
    "tnt_bench",
    [
      McpServerSpec.parse({
        type: "url",
        name: "bench",
        url: fixture.url,
        headers: { Authorization: { secret: "token", prefix: "Bearer " } },
      }),
    ],
  );
  try {
    await database.db.insertInto("tenants").values({ id: "tnt_bench", name: "bench" }).execute();
    await putVaultSecret(
      database.db,
      cipher,
      { tenantId: "tnt_bench", name: "token", value: token },
      new Date(),
    );
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(fixture.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const signal = new AbortController().signal;
    const directMs = await measureLatency(calls, () =>
      direct.callTool({ name: "echo", arguments: { text: "bench" } }),
    );
    const workerMs = await measureLatency(calls, () =>
      worker.call("bench", { tool: "echo", input: { text: "bench" }, idempotent: true }, signal),
    );
    return {
      calls,
      directMs,
      workerMs,
      overheadMs: { p50: round2(workerMs.p50 - directMs.p50), p99: round2(workerMs.p99 - directMs.p99) },
    };
  } finally {
    await direct.close();
    await worker.close();
    await fixture.close();
    await database.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runMcpBench({ calls: Number(process.argv[2] ?? "500") });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
