import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type Bus, connectBus } from "@wakeloop/bus";
import { createSandboxClient, type SandboxClient, SandboxMcpTransport } from "@wakeloop/sandbox-client";
import {
  installStdioMcpServer,
  killStdioMcpServers,
  STDIO_MCP_SERVER_PATH,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerFixture, testEnvironment } from "./testing/docker-fixture";

// MCP stdio servers in a real hardened container, driven the way the harness worker drives them: the
// SDK's Client over `SandboxMcpTransport`, through the runner's service on a real NATS. The server is
// a real one written with the SDK (packages/testing), run by the image's node as its own uid (1001).

const TENANT = "tnt_mcp_stdio";
const TOKEN = `tok_${randomBytes(8).toString("hex")}`;
let fixture: RunnerFixture;
let bus: Bus;
let sandbox: SandboxClient;
const sessionId = `sesn_mcp_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  fixture = await RunnerFixture.create();
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "mcp-stdio-test" });
  await fixture.service(bus);
  sandbox = createSandboxClient(bus);
  const ensured = await sandbox.ensureSandbox({
    tenantId: TENANT,
    sessionId,
    environment: testEnvironment(),
  });
  await installStdioMcpServer(fixture.docker, ensured.container_id);
}, 120_000);

afterAll(async () => {
  await fixture?.cleanup();
  await bus?.close();
});

function transport(overrides: { command?: string; env?: Record<string, string>; session?: string } = {}) {
  return new SandboxMcpTransport(bus, sandbox, {
    tenant_id: TENANT,
    session_id: overrides.session ?? sessionId,
    server: "fixture",
    command: overrides.command ?? "node",
    args: [STDIO_MCP_SERVER_PATH],
    env: overrides.env ?? { FIXTURE_TOKEN: TOKEN },
  });
}

async function connected(overrides: Parameters<typeof transport>[0] = {}): Promise<Client> {
  const client = new Client({ name: "mcp-stdio-test", version: "1.0.0" });
  await client.connect(transport(overrides), { timeout: 30_000 });
  return client;
}

type Stats = { pid: number; uid: number; calls: number; cancelled: number; cwd: string };
async function stats(client: Client): Promise<Stats> {
  return (await client.callTool({ name: "stats", arguments: {} })).structuredContent as Stats;
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as Array<{ type: string; text?: string }>).map((block) => block.text ?? "").join("");
}

describe("MCP stdio servers in the sandbox", () => {
  it("runs the server as its own uid (1001) in its own home: tools, calls, error results, the vault's env", async () => {
    const client = await connected();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "echo",
      "fail",
      "slow",
      "hold",
      "release",
      "stats",
      "token_digest",
      "crash",
    ]);
    expect(textOf(await client.callTool({ name: "echo", arguments: { text: "hello" } }))).toBe("hello");
    const failed = await client.callTool({ name: "fail", arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe("the stdio fixture failed on purpose");
    expect(await stats(client)).toMatchObject({ uid: 1001, cwd: "/home/wl-mcp" });
    // The value reached the process's environment; only its digest comes back.
    expect(textOf(await client.callTool({ name: "token_digest", arguments: {} }))).toBe(
      createHash("sha256").update(TOKEN).digest("hex"),
    );
    await client.close();
  }, 60_000);

  it("keeps one process for the session's server across clients, and the newest client takes it over", async () => {
    const first = await connected();
    const before = await stats(first);
    const second = await connected();
    expect((await stats(second)).pid).toBe(before.pid);
    // The first client was told it lost the server; its calls fail rather than hang.
    await expect(first.callTool({ name: "echo", arguments: { text: "x" } })).rejects.toThrow();
    await second.close();
    const third = await connected();
    expect((await stats(third)).pid).toBe(before.pid);
    await third.close();
  }, 60_000);

  it("never hands a late answer to an earlier client's request to the next client, whose ids start at 0 too", async () => {
    const first = await connected();
    // The first client's call after `initialize` (id 0): id 1, left waiting on the server.
    const late = first
      .callTool({ name: "hold", arguments: { key: "first" } })
      .catch((error: unknown) => error);
    const before = await stats(first);
    const second = await connected();
    // The second client's call after its `initialize`: id 1 as well, in flight when the first one's
    // answer comes (released by the second client's next call).
    const own = second.callTool({ name: "hold", arguments: { key: "second" } });
    await expect.poll(async () => (await stats(second)).calls, { timeout: 20_000 }).toBe(before.calls + 1);
    expect(textOf(await second.callTool({ name: "release", arguments: { key: "first" } }))).toBe(
      "released first",
    );
    expect(textOf(await second.callTool({ name: "release", arguments: { key: "second" } }))).toBe(
      "released second",
    );
    expect(textOf(await own)).toBe("released second");
    // The first client was taken over: its call failed and never got the answer.
    expect(await late).toBeInstanceOf(Error);
    await second.close();
  }, 60_000);

  it("cancels a slow call when the client aborts, and the server sees the cancellation", async () => {
    const client = await connected();
    const before = await stats(client);
    const controller = new AbortController();
    const slow = client.callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, {
      signal: controller.signal,
    });
    // Aborted once the server has the call (its count of calls grew; `stats` is not counted).
    await expect.poll(async () => (await stats(client)).calls, { timeout: 20_000 }).toBe(before.calls + 1);
    controller.abort(new Error("interrupted"));
    await expect(slow).rejects.toThrow();
    await expect
      .poll(async () => (await stats(client)).cancelled, { timeout: 20_000 })
      .toBe(before.cancelled + 1);
    await client.close();
  }, 60_000);

  it("reports a process that died with its stderr (vault values blanked) and starts a new one on the next open", async () => {
    const client = await connected();
    const before = await stats(client);
    const closed = new Promise<Error>((resolve) => {
      client.onerror = resolve;
    });
    await expect(client.callTool({ name: "crash", arguments: {} })).rejects.toThrow();
    const reason = (await closed).message;
    expect(reason).toContain("exit code 3");
    expect(reason).toContain("the stdio fixture crashes on purpose (token [secret])");
    expect(reason).not.toContain(TOKEN);
    const again = await connected();
    expect((await stats(again)).pid).not.toBe(before.pid);

    // Killed from outside (a crash, the OOM killer): the same.
    const ended = new Promise<Error>((resolve) => {
      again.onerror = resolve;
    });
    const container = (await sandbox.describe(sessionId)).container_id ?? "";
    await killStdioMcpServers(fixture.docker, container);
    expect((await ended).message).toContain("the server process exited");
    const third = await connected();
    expect(textOf(await third.callTool({ name: "echo", arguments: { text: "back" } }))).toBe("back");
    await third.close();
  }, 90_000);

  it("refuses a command the image lacks with a clear error, and a session the runner does not hold", async () => {
    await expect(connected({ command: "no-such-mcp-server" })).rejects.toThrow(
      /the command "no-such-mcp-server" is not in the sandbox/,
    );
    await expect(connected({ session: "sesn_not_here" })).rejects.toThrow(/holds no sandbox/);
  }, 60_000);

  it("releasing the sandbox ends the server with it", async () => {
    const client = await connected();
    const ended = new Promise<Error>((resolve) => {
      client.onerror = resolve;
    });
    await sandbox.release(sessionId, TENANT);
    expect((await ended).message).toMatch(/sandbox stopped|exited/);
    expect(await fixture.containers()).toEqual([]);
  }, 60_000);
});
