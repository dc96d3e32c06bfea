import { createHash, randomBytes } from "node:crypto";
import {
  installStdioMcpServer,
  killStdioMcpServers,
  Platform,
  requireDocker,
  STDIO_MCP_SERVER_PATH,
  toolResults,
} from "@wakeloop/testing";
import { EffectiveToolSet } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #12, stdio MCP servers, through the running services (each its own process; the runner with
// real Docker): a real MCP server written with the SDK (packages/testing) runs with the sandbox image's
// node inside the session's container, its stdio bridged over NATS to the worker's MCP client. Listing
// at wake start, ask-then-run, isError, the process killed mid-call and restarted, an interrupted slow
// tool, and the vault's value kept out of everything but the process's environment.

const TOKEN = `stdio-secret-${randomBytes(12).toString("hex")}`;
let platform: Platform;

beforeAll(async () => {
  platform = await Platform.start({
    workers: 1,
    sandbox: true,
    // Starting node in a container on a loaded machine is part of the listing's time.
    workerEnv: { MCP_LIST_TIMEOUT_MS: "30000", LOG_LEVEL: "debug" },
  });
  const stored = await platform.request("PUT", "/v1/vault/secrets/stdio_token", { value: TOKEN });
  expect(stored.status, JSON.stringify(stored.body)).toBe(200);
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

/** The fixture server run by node in the sandbox; `env` from the vault. */
const stdioServer = (name: string, fields: Record<string, unknown> = {}) => ({
  type: "stdio",
  name,
  command: "node",
  args: [STDIO_MCP_SERVER_PATH],
  env: { FIXTURE_TOKEN: { secret: "stdio_token" } },
  ...fields,
});

const send = (sessionId: string, events: unknown[], stop = "end_turn") =>
  platform.turn(sessionId, events, stop, 120_000);

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
const pidOf = (result: { value: unknown } | undefined) =>
  (result?.value as { pid?: number } | undefined)?.pid;
const tools = async (id: string) =>
  EffectiveToolSet.parse((await platform.request("GET", `/v1/sessions/${id}/tools`)).body);

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The ledger says the call was sent to the server (non-idempotent calls are `running` first). */
const running = (sessionId: string, name: string) => async () =>
  (
    await platform.db
      .selectFrom("tool_calls")
      .select("status")
      .where("session_id", "=", sessionId)
      .where("name", "=", name)
      .where("status", "=", "running")
      .execute()
  ).length > 0;

describe("stdio MCP servers in the session's sandbox, through the services", () => {
  it("rejects bad stdio specs with a 400 naming the field", async () => {
    const bad = [
      [{ ...stdioServer("files"), command: "" }, "mcp_servers[0].command"],
      [
        { ...stdioServer("files"), env: { FIXTURE_TOKEN: "inline-secret" } },
        "mcp_servers[0].env.FIXTURE_TOKEN",
      ],
      [{ ...stdioServer("files"), args: "one string" }, "mcp_servers[0].args"],
      [{ ...stdioServer("files"), url: "http://127.0.0.1/mcp" }, "url"],
    ] as const;
    for (const [server, field] of bad) {
      const response = await platform.request("POST", "/v1/agents", {
        name: "bad",
        model: platform.fakeModel(),
        mcp_servers: [server],
      });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
  });

  it("without an environment there is no sandbox: the server's tools are excluded with that reason", async () => {
    const agent = await platform.createAgent({ mcp_servers: [stdioServer("files")] });
    const created = await platform.request("POST", "/v1/sessions", { agent });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    platform.fake.enqueue({ text: "hello" });
    await send(id, [say("hi")]);
    const exclusion = (await tools(id)).excluded.find((entry) => entry.rule === "mcp_server:files");
    expect(exclusion?.step).toBe("runtime_gating");
    expect(exclusion?.reason).toContain("the session has no environment, so no sandbox");
  });

  it("lists, asks, runs, reports isError, survives a killed process and an interrupt; the secret stays out", async () => {
    const environment = await platform.request("POST", "/v1/environments", {
      name: "stdio mcp",
      config: { memory_mb: 512, pids_limit: 256 },
    });
    expect(environment.status, JSON.stringify(environment.body)).toBe(200);
    const agent = await platform.createAgent({
      mcp_servers: [
        stdioServer("files"),
        stdioServer("auto", { permission_policy: "always_allow" }),
        stdioServer("absent", { command: "no-such-mcp-server" }),
      ],
    });
    const created = await platform.request("POST", "/v1/sessions", {
      agent,
      environment_id: environment.body.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;

    // First wake: the sandbox exists now, but the server's file is not in it yet.
    platform.fake.enqueue({ text: "ready" });
    await send(id, [say("hello")]);
    const first = await tools(id);
    const reason = (rule: string) => first.excluded.find((entry) => entry.rule === rule)?.reason ?? "";
    expect(reason("mcp_server:absent")).toContain('the command "no-such-mcp-server" is not in the sandbox');
    expect(reason("mcp_server:files")).toContain("the server process exited");
    expect(reason("mcp_server:files")).toContain("Cannot find module");

    const docker = await requireDocker();
    const [container] = await platform.sandboxContainers(id);
    if (container === undefined) throw new Error("the session has no sandbox container");
    await installStdioMcpServer(docker, container.Id);

    // An always_ask tool: recorded and paused, run only after the allow.
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__files__echo", input: { text: "over stdio" } }] });
    const paused = await send(id, [say("echo")], "requires_action");
    expect(paused.find((event) => event.type === "mcp.tools_listed")).toBeDefined();
    const use = paused.find((event) => event.type === "agent.mcp_tool_use");
    expect(use).toMatchObject({
      name: "mcp__files__echo",
      mcp_server_name: "files",
      evaluated_permission: "ask",
    });
    expect((await tools(id)).tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["mcp__files__echo", "mcp__auto__slow", "mcp__auto__token_digest"]),
    );
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "mcp__auto__fail", input: {} },
          { name: "mcp__auto__stats", input: {} },
          { name: "mcp__auto__token_digest", input: {} },
        ],
      },
      { text: "done" },
    );
    await send(id, [{ type: "user.tool_confirmation", tool_use_id: use?.id, result: "allow" }]);
    const [echoed, failed, stats, digest] = toolResults(await platform.events(id));
    expect(echoed).toEqual({ name: "mcp__files__echo", isError: false, value: "over stdio" });
    expect(failed).toEqual({
      name: "mcp__auto__fail",
      isError: true,
      value: "the stdio fixture failed on purpose",
    });
    // Given vault secrets, it starts in its own home, where the agent can plant nothing.
    expect(stats).toMatchObject({ isError: false, value: { uid: 1001, cwd: "/home/wl-mcp" } });
    expect(digest?.value).toBe(createHash("sha256").update(TOKEN).digest("hex"));
    const pid = pidOf(stats);
    expect(pid).toEqual(expect.any(Number));

    // The process outlives the wake: the next wake's call reaches the same one.
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__auto__stats", input: {} }] }, { text: "same" });
    const [again] = toolResults(await send(id, [say("stats")]));
    expect(pidOf(again)).toBe(pid);

    // Killed mid-call: the call's outcome is unknown (not idempotent); the next call restarts it.
    platform.fake.enqueue(
      { toolCalls: [{ name: "mcp__auto__slow", input: { ms: 60_000 } }] },
      { text: "hm" },
    );
    let before = (await platform.events(id)).at(-1)?.seq ?? 0;
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [say("wait")] });
    await waitFor(running(id, "mcp__auto__slow"));
    await killStdioMcpServers(docker, container.Id);
    await platform.waitForIdle(id, "end_turn", before, 120_000);
    const [lost] = toolResults((await platform.events(id)).filter((event) => event.seq > before));
    expect(lost).toMatchObject({ name: "mcp__auto__slow", isError: true });
    expect(lost?.value).toContain("outcome is unknown");
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__auto__stats", input: {} }] }, { text: "back" });
    const [restarted] = toolResults(await send(id, [say("again")]));
    expect(restarted?.isError).toBe(false);
    expect(pidOf(restarted)).not.toBe(pid);

    // An interrupt cancels the running call at the server.
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__auto__slow", input: { ms: 60_000 } }] });
    before = (await platform.events(id)).at(-1)?.seq ?? 0;
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [say("wait long")] });
    await waitFor(running(id, "mcp__auto__slow"));
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [{ type: "user.interrupt" }] });
    await platform.waitForIdle(id, "end_turn", before, 60_000);
    const [cancelled] = toolResults((await platform.events(id)).filter((event) => event.seq > before));
    expect(cancelled).toMatchObject({ name: "mcp__auto__slow", isError: true });
    expect(cancelled?.value).toContain("cancelled by an interrupt");
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__auto__stats", input: {} }] }, { text: "counted" });
    const [counted] = toolResults(await send(id, [say("stats")]));
    expect(counted?.value).toMatchObject({ cancelled: 1 });

    // The value reached the process's environment (the digest above) and nothing else.
    expect(await platform.secretFoundIn(TOKEN)).toEqual([]);
  }, 600_000);
});
