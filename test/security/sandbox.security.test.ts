import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { connect, createServer, type Server } from "node:net";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type Bus, connectBus } from "@wakeloop/bus";
import {
  type EnvironmentConfig,
  type SandboxExecuteResponse,
  type SandboxToolName,
  WakeloopError,
} from "@wakeloop/contracts";
import {
  type AgentSqlPool,
  agentSqlDatabaseUrl,
  append,
  createAgentSqlPool,
  createSession,
} from "@wakeloop/db";
import { createGatewayServer, createTenant, type GatewayServer } from "@wakeloop/gateway";
import { createSandboxClient, type SandboxClient, SandboxMcpTransport } from "@wakeloop/sandbox-client";
import { postgresApprovals, type SandboxRunner, startSandboxService } from "@wakeloop/sandbox-runner";
import { RunnerFixture, silent, testEnvironment, testRunnerSettings } from "@wakeloop/sandbox-runner/testing";
import {
  MemoryLimitsEnv,
  memoryLimits,
  SandboxLimitsEnv,
  SubstrateLimitsEnv,
  sandboxLimits,
  substrateLimits,
} from "@wakeloop/service-kit";
import { createLogger } from "@wakeloop/telemetry";
import {
  BROWSER_SANDBOX_IMAGE,
  createTestDatabase,
  installStdioMcpServer,
  requireBrowserImage,
  type SeededAgent,
  STDIO_MCP_SERVER_PATH,
  seedAgent,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8, points 6, 9 (sandbox half) and 10 (runner half), against a real runner on real NATS,
// Docker, Postgres and the host's packet filter: what a hostile tenant or a hostile process inside a
// sandbox tries, and what it must not get.

const run = promisify(execFile);
let fixture: RunnerFixture;
let database: TestDatabase;
let seeded: SeededAgent;
let bus: Bus;
let runner: SandboxRunner;
let client: SandboxClient;

const MAX_PER_TENANT = 3;

beforeAll(async () => {
  fixture = await RunnerFixture.create();
  database = await createTestDatabase();
  seeded = await seedAgent(database.db);
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "sandbox-security" });
  runner = await startSandboxService({
    bus,
    docker: fixture.docker,
    runnerId: fixture.runnerId,
    stateDir: fixture.stateDir,
    idleStopMs: 600_000,
    log: silent,
    ...testRunnerSettings(),
    maxSandboxesPerTenant: MAX_PER_TENANT,
    approvals: postgresApprovals(database.appDb),
  });
  client = createSandboxClient(bus);
});

afterAll(async () => {
  await runner?.stop();
  await bus?.close();
  await fixture?.cleanup();
  await database?.drop();
});

const newSessionId = () => `sesn_sec_${randomBytes(5).toString("hex")}`;
let calls = 0;
const newCallId = () => `tcall_sec_${randomBytes(3).toString("hex")}_${++calls}`;

async function ensure(tenantId: string, environment: EnvironmentConfig, sessionId = newSessionId()) {
  await client.ensureSandbox({ tenantId, sessionId, environment });
  return sessionId;
}

async function shell(tenantId: string, sessionId: string, command: string): Promise<string> {
  const response = await client.execute({
    tenantId,
    sessionId,
    toolCallId: newCallId(),
    tool: "shell_run",
    input: { command },
  });
  if (response.outcome !== "completed") throw new Error(`needs approval: ${response.reason}`);
  return response.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** The workspace listing, through a tool the exec policy does not gate. */
async function workspace(tenantId: string, sessionId: string): Promise<string> {
  const response = await client.execute({
    tenantId,
    sessionId,
    toolCallId: newCallId(),
    tool: "ls",
    input: {},
  });
  return JSON.stringify(response);
}

async function refusal(promise: Promise<unknown>): Promise<WakeloopError> {
  const error = await promise.then(
    () => new Error("expected a refusal"),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WakeloopError);
  return error as WakeloopError;
}

function reachableFromHost(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

// ---- 6: network ---------------------------------------------------------------------------------

describe("a sandbox with network: bridge", () => {
  const added: string[] = [];
  const servers: Server[] = [];
  let victim: Docker.Container | undefined;
  const PRIVATE = `10.213.${Math.floor(Math.random() * 200) + 20}.1`;
  const METADATA = "169.254.169.254";

  async function listen(host: string): Promise<number> {
    const server = createServer((socket) => {
      socket.on("error", () => undefined); // probes hang up without reading
      socket.end("hello\n");
    });
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, host, resolve);
    });
    return (server.address() as { port: number }).port;
  }

  beforeAll(async () => {
    // Addresses on the host that a sandbox must not reach: a private one and the metadata address.
    for (const address of [PRIVATE, METADATA]) {
      await run("ip", ["addr", "add", `${address}/32`, "dev", "lo"]);
      added.push(address);
    }
    // Another tenant's container on Docker's default bridge, with a port published on the host.
    victim = await fixture.docker.createContainer({
      Image: "wakeloop-sandbox:bookworm",
      name: `wl-${fixture.runnerId}-victim`,
      Labels: { "wakeloop.runner": fixture.runnerId },
      Cmd: ["node", "-e", "require('net').createServer((s) => s.end('hi\\n')).listen(8080)"],
      ExposedPorts: { "8080/tcp": {} },
      HostConfig: { PortBindings: { "8080/tcp": [{ HostPort: "" }] } },
    });
    await victim.start();
  });

  afterAll(async () => {
    for (const server of servers) server.close();
    await victim?.remove({ force: true }).catch(() => undefined);
    for (const address of added) await run("ip", ["addr", "del", `${address}/32`, "dev", "lo"]);
  });

  it("reaches no other container, private or link-local address, nor the host and its published ports", async () => {
    const info = await (victim as Docker.Container).inspect();
    const victimIp = info.NetworkSettings.Networks.bridge?.IPAddress ?? "";
    const gateway = info.NetworkSettings.Networks.bridge?.Gateway ?? "";
    const published = info.NetworkSettings.Ports["8080/tcp"]?.[0]?.HostPort ?? "";
    expect(victimIp).not.toBe("");
    const targets = [
      [victimIp, "8080"],
      [gateway, published],
      [gateway, String(await listen(gateway))],
      [PRIVATE, String(await listen(PRIVATE))],
      [METADATA, String(await listen(METADATA))],
    ];
    // The targets are open: the host reaches each of them (the victim once its listener is up).
    for (const [host = "", port = ""] of targets.slice(1)) {
      await expect.poll(() => reachableFromHost(host, Number(port)), { timeout: 30_000 }).toBe(true);
    }

    const sessionId = await ensure("tnt_net", testEnvironment({ network: "bridge" }));
    const probes = targets
      .map(
        ([host, port]) =>
          `(timeout 3 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null && echo "OPEN ${host}:${port}" || echo "SHUT ${host}:${port}") &`,
      )
      .join("\n");
    const text = await shell("tnt_net", sessionId, `${probes}\nwait`);
    for (const [host, port] of targets) expect(text).toContain(`SHUT ${host}:${port}`);
    expect(text).not.toContain("OPEN");

    // Its network is its own, and it goes (with its firewall rules) when the sandbox is released.
    const container = await fixture.docker
      .getContainer(runner.manager.describe(sessionId).container_id ?? "")
      .inspect();
    const networks = Object.keys(container.NetworkSettings.Networks);
    expect(networks).toHaveLength(1);
    expect(networks[0]).not.toBe("bridge");
    await client.release(sessionId, "tnt_net");
    const rules = (await run("iptables", ["-w", "-S"])).stdout;
    expect(rules).not.toContain(`wakeloop:${fixture.runnerId}:`);
    const left = await fixture.docker.listNetworks({
      filters: JSON.stringify({ name: [networks[0] ?? ""] }),
    });
    expect(left).toEqual([]);
  }, 120_000);
});

// ---- 6: operator bounds ---------------------------------------------------------------------------

describe("operator bounds", () => {
  let gateway: GatewayServer;
  let agentSql: AgentSqlPool;
  let url: string;
  let ownerKey: string;

  beforeAll(async () => {
    agentSql = createAgentSqlPool({ url: agentSqlDatabaseUrl(database.appUrl), max: 1 });
    gateway = createGatewayServer({
      db: database.appDb,
      agentSql,
      bus,
      log: createLogger({ service: "sandbox-security", level: "silent" }),
      config: {
        bodyLimitBytes: 1_048_576,
        discardBytes: 1_048_576,
        quotas: {
          requestRate: { requests: 0, windowSeconds: 60 },
          streamsPerKey: 10,
          openSessionsPerTenant: 0,
          budgets: { defaultTokens: null, maxTokens: null },
          scheduledTasksPerAgent: 50,
          wakesInFlightPerTenant: 16,
        },
        sseKeepAliveMs: 15_000,
        tools: {
          globalToolPolicy: {},
          maxSubSessionDepth: 2,
          maxChildrenPerSession: 10,
          webSearch: false,
          browserImages: [],
        },
        models: { egress: { allowedHosts: [] }, baseUrlHosts: [], compatibleKeyHosts: [] },
        credentialKeys: [],
        sandboxLimits: sandboxLimits(SandboxLimitsEnv.parse({})),
        memoryLimits: memoryLimits(MemoryLimitsEnv.parse({})),
        substrateLimits: substrateLimits(SubstrateLimitsEnv.parse({})),
      },
    });
    url = `http://127.0.0.1:${await gateway.listen(0, "127.0.0.1")}`;
    ownerKey = (await createTenant(database.db, { name: "bounds" })).ownerKey.key;
  });

  afterAll(async () => {
    await gateway?.close();
    await agentSql?.end();
  });

  async function post(path: string, body: unknown) {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${ownerKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, never> };
  }

  it("the gateway refuses an environment over a maximum when it is saved, naming the limit", async () => {
    const over: Array<[Record<string, unknown>, string]> = [
      [{ cpus: 8 }, "SANDBOX_MAX_CPUS"],
      [{ memory_mb: 65_536 }, "SANDBOX_MAX_MEMORY_MB"],
      [{ pids_limit: 100_000 }, "SANDBOX_MAX_PIDS"],
      [{ warm_pool_size: 64 }, "SANDBOX_MAX_WARM_POOL_SIZE"],
      [{ workspace_mb: 1_048_576 }, "SANDBOX_MAX_WORKSPACE_MB"],
      [{ network: "bridge" }, "SANDBOX_ALLOW_NETWORK"],
      [{ image: "docker:dind" }, "SANDBOX_ALLOWED_IMAGES"],
    ];
    for (const [config, limit] of over) {
      const response = await post("/v1/environments", { name: "too big", config });
      expect(response.status, JSON.stringify(config)).toBe(400);
      expect(JSON.stringify(response.body)).toContain(limit);
    }
    const saved = await post("/v1/environments", { name: "fits", config: { memory_mb: 256 } });
    expect(saved.status).toBe(200);
    const updated = await post(`/v1/environments/${saved.body.id}`, { config: { cpus: 16 } });
    expect(updated.status).toBe(400);
    expect(JSON.stringify(updated.body)).toContain("SANDBOX_MAX_CPUS");
  });

  it("the runner refuses them again, before creating anything", async () => {
    const sessionId = newSessionId();
    const error = await refusal(
      ensure("tnt_bounds", testEnvironment({ cpus: 8, memory_mb: 4_096 }), sessionId),
    );
    expect(error.code).toBe("sandbox_limit_exceeded");
    expect(error.message).toContain("SANDBOX_MAX_CPUS");
    expect(await fixture.containers()).not.toContainEqual(
      expect.objectContaining({ Labels: expect.objectContaining({ "wakeloop.session": sessionId }) }),
    );
  });

  it("holds a tenant to its cap of live sandboxes, even under a burst, and not other tenants", async () => {
    const environment = testEnvironment();
    const burst = await Promise.allSettled(
      Array.from({ length: MAX_PER_TENANT + 1 }, () => ensure("tnt_cap", environment)),
    );
    const refused = burst.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ code: "sandbox_quota_exceeded" });
    expect(await ensure("tnt_cap_other", environment)).toMatch(/^sesn_/);

    const first = burst.find((result) => result.status === "fulfilled");
    await client.release((first as PromiseFulfilledResult<string>).value, "tnt_cap");
    expect(await ensure("tnt_cap", environment)).toMatch(/^sesn_/);
  }, 180_000);

  it("sets a nofile ulimit on sandbox processes", async () => {
    const sessionId = await ensure("tnt_ulimit", testEnvironment());
    expect(await shell("tnt_ulimit", sessionId, "ulimit -n; ulimit -c")).toMatch(/^1024\n0\n/);
  });
});

// ---- 6: workspace disk ----------------------------------------------------------------------------

describe("a sandbox's workspace", () => {
  async function write(tenantId: string, sessionId: string, path: string, content: string) {
    const response = await client.execute({
      tenantId,
      sessionId,
      toolCallId: newCallId(),
      tool: "write",
      input: { path, content },
    });
    if (response.outcome !== "completed") throw new Error(`needs approval: ${response.reason}`);
    return response;
  }

  it("holds no more than the environment's workspace_mb, through commands and the write tool, and no other workspace shrinks", async () => {
    const environment = testEnvironment({ workspace_mb: 32 });
    const filled = await ensure("tnt_disk", environment);
    const other = await ensure("tnt_disk_other", environment);

    const dd = await shell(
      "tnt_disk",
      filled,
      "dd if=/dev/zero of=/workspace/fill bs=1M count=64 2>&1; du -m /workspace/fill",
    );
    expect(dd).toContain("No space left on device");
    expect(Number(/^(\d+)\s+\/workspace\/fill$/m.exec(dd)?.[1])).toBeLessThanOrEqual(32);
    expect(dd).toContain("the workspace is full (32 MB, the environment's workspace_mb)");
    const fallocate = await shell("tnt_disk", filled, "fallocate -l 64M /workspace/big 2>&1");
    expect(fallocate).toContain("No space left on device");
    const written = await write("tnt_disk", filled, "more.txt", "x".repeat(900_000));
    expect(written).toMatchObject({ is_error: true, result: { code: "workspace_full" } });
    expect(JSON.stringify(written.content)).toContain("the workspace is full (32 MB");

    // Another session's workspace is its own: it still takes what its bound allows.
    expect(
      await shell("tnt_disk_other", other, "dd if=/dev/zero of=/workspace/f bs=1M count=16 2>&1 && echo OK"),
    ).toContain("OK");
    // The full sandbox is not wedged: freeing space makes writes work again.
    await shell("tnt_disk", filled, "rm -f /workspace/fill /workspace/big");
    expect(await write("tnt_disk", filled, "more.txt", "x".repeat(900_000))).toMatchObject({
      is_error: false,
    });
    await client.release(filled, "tnt_disk");
    await client.release(other, "tnt_disk_other");
  }, 180_000);
});

// ---- 9: the agent channel -------------------------------------------------------------------------

describe("a hostile process inside a sandbox", () => {
  it("cannot signal the agent, reach its channel or take the runner down with frames", async () => {
    const bystander = await ensure("tnt_bystander", testEnvironment());
    const hostile = await ensure("tnt_hostile", testEnvironment());
    const agentPid = "pgrep -o -x node";
    const before = await shell("tnt_hostile", hostile, agentPid);
    // The agent's stdout is the runner's channel: garbage, a forged reply and an oversized line.
    const attack = [
      `A=$(${agentPid}); id -u`,
      "kill -9 $A 2>&1; kill -STOP $A 2>&1",
      `printf '\\nnull\\n{"id":1,"ok":false}\\n' > /proc/$A/fd/1 || echo NO-CHANNEL`,
      'for i in $(seq 1 500); do printf \'{"id":%d,"ok":false}\\n\' $i; done > /proc/$A/fd/1 || echo NO-CHANNEL',
      "head -c 120000000 /dev/zero | tr '\\0' x > /proc/$A/fd/1 || echo NO-CHANNEL",
      "timeout 2 cat /proc/$A/fd/0 2>&1 | head -c 100",
      "echo survived",
    ].join("\n");
    const text = await shell("tnt_hostile", hostile, attack);
    expect(text).toMatch(/^1000\n/);
    expect(text).toContain("Operation not permitted");
    expect(text.match(/NO-CHANNEL/g)).toHaveLength(3);
    expect(text).toContain("survived");

    // The same agent still answers, and the runner serves everyone else.
    expect(await shell("tnt_hostile", hostile, agentPid)).toBe(before);
    expect(await shell("tnt_bystander", bystander, "echo alive")).toContain("alive");
  }, 180_000);
});

// ---- issue #30, items 2-4: the inspection tool, MCP servers' secrets, the browser -----------------

/** A tool call's text, whatever its outcome. */
async function tool(
  tenantId: string,
  sessionId: string,
  name: SandboxToolName,
  input: Record<string, unknown>,
) {
  const response = await client.execute({ tenantId, sessionId, toolCallId: newCallId(), tool: name, input });
  if (response.outcome !== "completed") throw new Error(`needs approval: ${response.reason}`);
  return {
    isError: response.is_error,
    text: response.content.map((block) => (block.type === "text" ? block.text : "")).join(""),
  };
}

describe("the always-allowed bash inspection tool", () => {
  it("runs no code of the agent's choosing and writes no file, however an option is spelled", async () => {
    const sessionId = await ensure("tnt_inspect", testEnvironment());
    // Lines a shell would run, enough of them for sort to spill to compressed temporary files.
    const lines = ["touch /workspace/pwned", ...Array.from({ length: 4_000 }, (_, i) => `# filler ${i}`)];
    await tool("tnt_inspect", sessionId, "write", { path: "cmds.txt", content: `${lines.join("\n")}\n` });
    for (const command of [
      "sort -S 1k --compress-prog=sh cmds.txt",
      "sort -S 1k --compress-program=sh cmds.txt",
      "sort -uo out.txt cmds.txt",
      "sort --outp=out.txt cmds.txt",
      "sort -T . -S 1k cmds.txt",
      "uniq cmds.txt out.txt",
      "rg --pre=sh touch cmds.txt",
      "find . -name cmds.txt -exec sh '{}' ';'",
    ]) {
      const result = await tool("tnt_inspect", sessionId, "bash", { command });
      expect(result.isError, command).toBe(true);
      expect(result.text, command).toContain("bash allows only inspection options");
    }
    const listing = await workspace("tnt_inspect", sessionId);
    expect(listing).not.toContain("pwned");
    expect(listing).not.toContain("out.txt");
    // What inspection needs still runs.
    expect(
      (await tool("tnt_inspect", sessionId, "bash", { command: "sort -S 1k -ru cmds.txt" })).text,
    ).toContain("touch /workspace/pwned");
  }, 120_000);
});

describe("secrets given to an MCP stdio server", () => {
  it("stay out of the sandbox user's reach: the server's environment, memory, signals and home", async () => {
    const tenantId = "tnt_mcp_secret";
    const sessionId = await ensure(tenantId, testEnvironment());
    await installStdioMcpServer(fixture.docker, runner.manager.describe(sessionId).container_id ?? "");
    const token = `tok_${randomBytes(12).toString("hex")}`;
    const mcp = new Client({ name: "sandbox-security", version: "1.0.0" });
    await mcp.connect(
      new SandboxMcpTransport(bus, client, {
        tenant_id: tenantId,
        session_id: sessionId,
        server: "fixture",
        command: "node",
        args: [STDIO_MCP_SERVER_PATH],
        env: { FIXTURE_TOKEN: token },
      }),
      { timeout: 30_000 },
    );
    const stats = async () =>
      (await mcp.callTool({ name: "stats", arguments: {} })).structuredContent as {
        pid: number;
        uid: number;
      };
    const { pid, uid } = await stats();
    expect(uid).not.toBe(1000);

    const attack = [
      "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep FIXTURE_TOKEN",
      `cat /proc/${pid}/environ 2>&1 | tr '\\0' '\\n'`,
      `head -c 64 /proc/${pid}/mem 2>&1 | head -c 200`,
      `ls /proc/${pid}/fd 2>&1`,
      `kill -STOP ${pid} 2>&1`,
      "ls -a /home/wl-mcp 2>&1",
      `python3 -c "import ctypes; print('ptrace', ctypes.CDLL(None).ptrace(16, ${pid}, 0, 0))"`,
    ].join("\n");
    const text = await shell(tenantId, sessionId, attack);
    expect(text).not.toContain(token);
    expect(text).toContain("Permission denied");
    expect(text).toContain("Operation not permitted");
    expect(text).toContain("ptrace -1");
    // The always-allowed inspection tool gets no further.
    const inspected = await tool(tenantId, sessionId, "bash", { command: `cat /proc/${pid}/environ` });
    expect(inspected.text).not.toContain(token);
    expect(inspected.text).toContain("Permission denied");

    // The server itself still runs and still has its secret.
    expect((await stats()).pid).toBe(pid);
    expect(
      (await mcp.callTool({ name: "token_digest", arguments: {} })).content as Array<{ text?: string }>,
    ).toEqual([expect.objectContaining({ text: createHash("sha256").update(token).digest("hex") })]);
    await mcp.close();
  }, 120_000);
});

describe("an MCP stdio server whose code the sandbox user can change", () => {
  it("gets no secrets: a server in the workspace, under /tmp or loaded by --require= never starts with them", async () => {
    const tenantId = "tnt_mcp_writable";
    const sessionId = await ensure(tenantId, testEnvironment());
    const containerId = runner.manager.describe(sessionId).container_id ?? "";
    await installStdioMcpServer(fixture.docker, containerId);
    await installStdioMcpServer(fixture.docker, containerId, "/workspace/.mcp/server.cjs");
    await shell(tenantId, sessionId, "cp /workspace/.mcp/server.cjs /tmp/server.cjs");
    const token = `tok_${randomBytes(12).toString("hex")}`;
    const open = async (server: string, args: string[], env: Record<string, string>) => {
      const mcp = new Client({ name: "sandbox-security", version: "1.0.0" });
      try {
        await mcp.connect(
          new SandboxMcpTransport(bus, client, {
            tenant_id: tenantId,
            session_id: sessionId,
            server,
            command: "node",
            args,
            env,
          }),
          { timeout: 30_000 },
        );
        const { uid } = (await mcp.callTool({ name: "stats", arguments: {} })).structuredContent as {
          uid: number;
        };
        return `started as ${uid}`;
      } catch (error) {
        return String(error);
      } finally {
        await mcp.close().catch(() => undefined);
      }
    };
    const secret = { FIXTURE_TOKEN: token };
    for (const [server, args, path] of [
      ["ws", ["/workspace/.mcp/server.cjs"], "/workspace/.mcp/server.cjs"],
      ["tmp", ["/tmp/server.cjs"], "/tmp/server.cjs"],
      ["req", ["--require=/workspace/.mcp/server.cjs", STDIO_MCP_SERVER_PATH], "/workspace/.mcp/server.cjs"],
    ] as const) {
      const refused = await open(server, [...args], secret);
      expect(refused, server).toContain("runs code the sandbox user can change");
      expect(refused, server).toContain(path);
    }
    // Relative to the server's own home, not the workspace: the agent's file is not found there.
    expect(await open("rel", [".mcp/server.cjs"], secret)).not.toContain("started");
    // Without secrets a workspace server runs; with them, one the agent cannot change does.
    expect(await open("plain", ["/workspace/.mcp/server.cjs"], {})).toBe("started as 1001");
    expect(await open("image", [STDIO_MCP_SERVER_PATH], secret)).toBe("started as 1001");
    // No process of the refused ones ever held the token.
    const text = await shell(
      tenantId,
      sessionId,
      "ps -eo args | grep -c server.cjs; ls /proc/*/environ | wc -l",
    );
    expect(text).not.toContain(token);
  }, 180_000);
});

describe("a sandbox's browser", () => {
  it("cannot be pointed elsewhere, signalled or read by the sandbox user", async () => {
    await requireBrowserImage(fixture.docker);
    const tenantId = "tnt_browser";
    const sessionId = await ensure(
      tenantId,
      testEnvironment({ image: BROWSER_SANDBOX_IMAGE, memory_mb: 1_024, pids_limit: 512 }),
    );
    // A DevTools impostor of the sandbox user: it notes every connection the runner would make to it.
    const impostor = [
      "import socket, os",
      "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)",
      "open('/tmp/impostor-port', 'w').write(str(s.getsockname()[1]))",
      "while True:",
      "    c, _ = s.accept(); open('/workspace/contacted', 'a').write('x'); c.close()",
    ].join("\n");
    await tool(tenantId, sessionId, "write", { path: "impostor.py", content: impostor });
    const started = await client.execute({
      tenantId,
      sessionId,
      toolCallId: newCallId(),
      tool: "shell_run",
      input: { command: "exec python3 /workspace/impostor.py", background: true },
    });
    expect(started.outcome).toBe("completed");
    // Its endpoint planted wherever a launcher might look, before the browser's first start.
    const plant = [
      "for i in $(seq 1 50); do [ -s /tmp/impostor-port ] && break; sleep 0.1; done",
      "port=$(cat /tmp/impostor-port); pid=$(pgrep -f impostor.py | head -n 1)",
      "for dir in /tmp/.wl-browser /run/wl-browser /home/wl-browser; do",
      '  mkdir -p "$dir/profile" 2>&1; echo "$pid" > "$dir/pid"',
      '  printf "%s\\n/devtools/browser/impostor" "$port" | tee "$dir/endpoint" > "$dir/profile/DevToolsActivePort"',
      "done",
      "echo planted",
    ].join("\n");
    const planted = await shell(tenantId, sessionId, plant);
    expect(planted).toContain("Permission denied");

    const navigated = await tool(tenantId, sessionId, "browser_navigate", { url: "about:blank" });
    expect(navigated.isError, navigated.text).toBe(false);
    expect(await workspace(tenantId, sessionId)).not.toContain("contacted");

    const poke = [
      "b=$(pgrep -o chromium); stat -c %u /proc/$b",
      "kill -STOP $b 2>&1",
      "cat /proc/$b/environ 2>&1 | head -c 100; echo",
      "ls /home/wl-browser 2>&1",
    ].join("\n");
    const poked = await shell(tenantId, sessionId, poke);
    expect(poked).not.toMatch(/^1000\n/);
    expect(poked).toContain("Operation not permitted");
    expect(poked).toContain("Permission denied");
    expect((await tool(tenantId, sessionId, "browser_navigate", { url: "about:blank" })).isError).toBe(false);

    // What Chromium sends back is bounded before the runner parses it: a large answer to the runner's
    // own request arrives whole, a page's 2 MiB console message cuts only this session's connection.
    const big = await tool(tenantId, sessionId, "browser_evaluate", { code: "'x'.repeat(2 * 1024 * 1024)" });
    expect(big.text).toContain("2097154 characters");
    const flood = await tool(tenantId, sessionId, "browser_evaluate", {
      code: "() => { console.log('y'.repeat(2 * 1024 * 1024)); return new Promise((r) => setTimeout(r, 2000)); }",
    });
    expect(flood.isError, flood.text).toBe(true);
    expect((await tool(tenantId, sessionId, "browser_close", {})).isError).toBe(false);
    expect((await tool(tenantId, sessionId, "browser_navigate", { url: "about:blank" })).isError).toBe(false);
    expect(await shell(tenantId, sessionId, "echo alive")).toContain("alive");
  }, 180_000);
});

// ---- 10: tenant ownership and approvals -----------------------------------------------------------

describe("requests the runner must refuse", () => {
  it("refuses a request for a session whose sandbox another tenant owns", async () => {
    const sessionId = await ensure("tnt_owner", testEnvironment());
    await shell("tnt_owner", sessionId, "echo secret > /workspace/secret.txt");

    const read = client.execute({
      tenantId: "tnt_intruder",
      sessionId,
      toolCallId: newCallId(),
      tool: "shell_run",
      input: { command: "cat /workspace/secret.txt" },
    });
    expect((await refusal(read)).code).toBe("sandbox_tenant_mismatch");
    expect((await refusal(ensure("tnt_intruder", testEnvironment(), sessionId))).code).toBe(
      "sandbox_tenant_mismatch",
    );
    expect((await refusal(client.release(sessionId, "tnt_intruder"))).code).toBe("sandbox_tenant_mismatch");
    expect(await shell("tnt_owner", sessionId, "cat /workspace/secret.txt")).toContain("secret");
  }, 120_000);

  it("runs an `approved` call only when its allow is committed in Postgres", async () => {
    const session = await createSession(database.db, {
      tenantId: seeded.tenantId,
      agentId: seeded.agentId,
      agentVersion: seeded.agentVersion,
      environmentId: null,
      parentSessionId: null,
      title: "approvals",
      metadata: {},
      budget: { max_total_tokens: null },
    });
    const environment = testEnvironment({
      exec_security: "allowlist",
      exec_allowlist: ["echo"],
      exec_ask: "on-miss",
    });
    await ensure(seeded.tenantId, environment, session.id);
    const callId = `sevt_${randomBytes(8).toString("hex")}`;
    const touch = (): Promise<SandboxExecuteResponse> =>
      client.execute({
        tenantId: seeded.tenantId,
        sessionId: session.id,
        toolCallId: callId,
        tool: "shell_run",
        input: { command: "touch /workspace/approved.txt" },
        approved: true,
      });

    // Sent as approved, but nobody allowed it: refused, nothing ran.
    expect(await touch()).toMatchObject({ outcome: "needs_approval" });
    expect(await workspace(seeded.tenantId, session.id)).not.toContain("approved.txt");

    await append(database.db, {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      events: [
        { id: callId, type: "agent.tool_use", name: "shell_run", input: {}, evaluated_permission: "ask" },
        { type: "user.tool_confirmation", tool_use_id: callId, result: "allow" },
      ],
    });
    expect(await touch()).toMatchObject({ outcome: "completed", is_error: false });
    expect(await workspace(seeded.tenantId, session.id)).toContain("approved.txt");
  }, 120_000);
});
