import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { connectBus } from "@wakeloop/bus";
import { createSandboxClient, SandboxMcpTransport } from "@wakeloop/sandbox-client";
import {
  installStdioMcpServer,
  type LatencySummary,
  measureLatency,
  round2,
  STDIO_MCP_SERVER_PATH,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { RunnerFixture, testEnvironment } from "../src/testing/docker-fixture";

/*
 * MCP stdio call overhead (issue #12):   npx tsx apps/sandbox-runner/bench/mcp-stdio-bench.ts [calls]
 * The same `echo` call to the SDK-built stdio server running with node in a sandbox container, two
 * ways, sequentially after a warm-up: the SDK's own StdioClientTransport over `docker exec -i` (the
 * floor: a process in the container, its stdio piped straight to the client), and the platform's path
 * (the SDK client over `SandboxMcpTransport`: an `mcp_send` request over NATS to the runner, written to
 * the process's stdin, the answer published back as a frame). The overhead is the difference; one bus
 * round trip to the runner (`describe`, which does no work) is measured beside it for scale.
 */

export interface McpStdioBenchResult {
  calls: number;
  directMs: LatencySummary;
  bridgedMs: LatencySummary;
  /** A request/reply to the runner that does nothing (`describe`): the bus's share of the overhead. */
  busRoundTripMs: LatencySummary;
  /** p50 and p99 of the bridged path minus those of the direct one. */
  overheadMs: { p50: number; p99: number };
}

export async function runMcpStdioBench(options: { calls?: number } = {}): Promise<McpStdioBenchResult> {
  const calls = options.calls ?? 300;
  const fixture = await RunnerFixture.create();
  const bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "mcp-stdio-bench" });
  await fixture.service(bus);
  const direct = new Client({ name: "bench", version: "1.0.0" });
  const bridged = new Client({ name: "bench", version: "1.0.0" });
  try {
    const sandbox = createSandboxClient(bus);
    const sessionId = "sesn_mcp_stdio_bench";
    const ensured = await sandbox.ensureSandbox({
      tenantId: "tnt_bench",
      sessionId,
      environment: testEnvironment(),
    });
    await installStdioMcpServer(fixture.docker, ensured.container_id);
    await direct.connect(
      new StdioClientTransport({
        command: "docker",
        args: [
          "exec",
          "-i",
          "-u",
          // As the platform starts it: the MCP servers' own uid (container-exec.ts).
          "1001:1001",
          "-w",
          "/workspace",
          ensured.container_id,
          "node",
          STDIO_MCP_SERVER_PATH,
        ],
      }),
    );
    await bridged.connect(
      new SandboxMcpTransport(bus, sandbox, {
        tenant_id: "tnt_bench",
        session_id: sessionId,
        server: "bench",
        command: "node",
        args: [STDIO_MCP_SERVER_PATH],
        env: {},
      }),
    );
    const echo = (client: Client) => () => client.callTool({ name: "echo", arguments: { text: "bench" } });
    const directMs = await measureLatency(calls, echo(direct));
    const bridgedMs = await measureLatency(calls, echo(bridged));
    const busRoundTripMs = await measureLatency(calls, () => sandbox.describe(sessionId));
    return {
      calls,
      directMs,
      bridgedMs,
      busRoundTripMs,
      overheadMs: { p50: round2(bridgedMs.p50 - directMs.p50), p99: round2(bridgedMs.p99 - directMs.p99) },
    };
  } finally {
    await direct.close().catch(() => undefined);
    await bridged.close().catch(() => undefined);
    await fixture.cleanup();
    await bus.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runMcpStdioBench({ calls: Number(process.argv[2] ?? "300") });
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
