import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type McpFixture,
  mcpFixtureServer,
  type Platform,
  startMcpPlatform,
  toolResults,
} from "@wakeloop/testing";
import { EffectiveToolSet, mcpToolName } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #12, MCP part, through the running services against a real MCP server built with the official
// SDK (packages/testing): the worker lists its tools at each wake start, offers them namespaced and
// always_ask by default, calls them through the egress guard with a credential from the tenant's
// vault, and turns the server's errors, a restart mid-call and an interrupt into clear results.

let token: string;
let fixture: McpFixture;
let platform: Platform;

beforeAll(async () => {
  ({ platform, fixture, token } = await startMcpPlatform({ workers: 1, workerEnv: { LOG_LEVEL: "debug" } }));
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await fixture?.close();
});

const fixtureServer = (fields: Record<string, unknown> = {}) => mcpFixtureServer(fixture, fields);

async function session(agentFields: Record<string, unknown>): Promise<string> {
  const agent = await platform.request("POST", "/v1/agents", {
    name: "mcp user",
    model: platform.fakeModel(),
    ...agentFields,
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(200);
  const created = await platform.request("POST", "/v1/sessions", { agent: agent.body.id });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id as string;
}

const send = (sessionId: string, events: unknown[], stop = "end_turn") =>
  platform.turn(sessionId, events, stop);

const say = (text: string) => ({ type: "user.message", content: [{ type: "text", text }] });
const tools = async (id: string) =>
  EffectiveToolSet.parse((await platform.request("GET", `/v1/sessions/${id}/tools`)).body);

describe("MCP servers through the services", () => {
  it("rejects bad server specs and vault input with clear 4xx errors, and lists names only", async () => {
    const bad = [
      [{ ...fixtureServer(), name: "two__parts" }, "MCP server names match"],
      [{ ...fixtureServer(), url: "ftp://example.com/mcp" }, "an http(s) URL"],
      [{ ...fixtureServer(), headers: { Authorization: "Bearer plain" } }, "mcp_servers"],
      [
        { ...fixtureServer(), configs: [{ name: "echo" }, { name: "echo", enabled: false }] },
        'the tool \\"echo\\" is configured twice',
        "mcp_servers[0].configs[1].name",
      ],
      [
        { ...fixtureServer(), configs: [{ name: "mcp__fixture__echo" }] },
        "name the tool as the server lists it",
        "mcp_servers[0].configs[0].name",
      ],
      [
        { ...fixtureServer(), configs: [{ name: "two words" }] },
        "1 to 200 characters, no spaces",
        "mcp_servers[0].configs[0].name",
      ],
      [
        {
          ...fixtureServer(),
          permission_policy: "always_allow",
          default_config: { permission_policy: "always_ask" },
        },
        "set the default policy once",
        "mcp_servers[0].default_config.permission_policy",
      ],
    ] as const;
    for (const [server, ...messages] of bad) {
      const response = await platform.request("POST", "/v1/agents", {
        name: "bad",
        model: platform.fakeModel(),
        mcp_servers: [server],
      });
      expect(response.status).toBe(400);
      for (const message of messages) expect(JSON.stringify(response.body)).toContain(message);
    }
    const twice = await platform.request("POST", "/v1/agents", {
      name: "bad",
      model: platform.fakeModel(),
      mcp_servers: [fixtureServer(), fixtureServer()],
    });
    expect(twice.status).toBe(400);
    expect(JSON.stringify(twice.body)).toContain('two MCP servers are named \\"fixture\\"');
    const policy = await platform.request("POST", "/v1/agents", {
      name: "bad",
      model: platform.fakeModel(),
      tool_policy: { deny: ["mcp__other__*"] },
    });
    expect(policy.status).toBe(400);
    expect(JSON.stringify(policy.body)).toContain("unknown tool or group");
    const reserved = await platform.request("POST", "/v1/agents", {
      name: "bad",
      model: platform.fakeModel(),
      tools: [
        {
          type: "custom",
          name: "mcp__fixture__echo",
          description: "looks like an MCP tool",
          input_schema: { type: "object" },
        },
      ],
    });
    expect(reserved.status).toBe(400);
    expect(reserved.body).toMatchObject({
      error: { type: "invalid_request_error", details: { tool: "mcp__fixture__echo" } },
    });
    expect(JSON.stringify(reserved.body)).toContain(
      "names starting with mcp__ belong to the tools of MCP servers",
    );
    for (const servers of [[fixtureServer({ configs: [{ name: "echo" }] })], []]) {
      const environment = await platform.request("POST", "/v1/environments", {
        name: "bad",
        mcp_servers: [...servers, fixtureServer({ configs: [{ name: "slow" }, { name: "slow" }] })],
      });
      expect(environment.status).toBe(400);
      expect(JSON.stringify(environment.body)).toContain("configured twice");
    }

    expect((await platform.request("PUT", "/v1/vault/secrets/ok", { value: "" })).status).toBe(400);
    expect((await platform.request("PUT", "/v1/vault/secrets/bad%20name", { value: "x" })).status).toBe(400);
    expect((await platform.request("DELETE", "/v1/vault/secrets/never_stored")).status).toBe(404);
    const listed = await platform.request("GET", "/v1/vault/secrets");
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((secret: { name: string }) => secret.name)).toContain("fixture_token");
    expect(JSON.stringify(listed.body)).not.toContain(token);
  });

  it("lists, namespaces and normalizes the tools; a call asks first and runs once allowed", async () => {
    // Opted in eagerly, so the request carries every MCP tool (docs/tool-search.md).
    const id = await session({ tool_policy: { also_allow: ["group:mcp"] }, mcp_servers: [fixtureServer()] });
    const before = await tools(id);
    expect(before.excluded).toContainEqual(
      expect.objectContaining({
        tool: "mcp__fixture__*",
        step: "runtime_gating",
        rule: "mcp_server:fixture",
      }),
    );

    platform.fake.enqueue({ toolCalls: [{ name: "mcp__fixture__echo", input: { text: "hello over MCP" } }] });
    const paused = await send(id, [say("echo something")], "requires_action");
    expect(paused.find((event) => event.type === "mcp.tools_listed")).toBeDefined();
    const use = paused.find((event) => event.type === "agent.mcp_tool_use");
    expect(use).toMatchObject({
      name: "mcp__fixture__echo",
      mcp_server_name: "fixture",
      evaluated_permission: "ask",
    });
    expect(fixture.calls.some((call) => call.arguments.text === "hello over MCP")).toBe(false);

    // What the model was offered: namespaced names and schemas without $ref / $defs.
    const request = platform.fake.requests.findLast((entry) => entry.path === "/v1/chat/completions");
    if (request === undefined) throw new Error("the fake model got no request");
    const offered = (request.body as { tools: Array<{ function: { name: string; parameters: unknown } }> })
      .tools;
    const lookup = offered.find((tool) => tool.function.name === mcpToolName("fixture", "Lookup.Record-v2"));
    expect(lookup).toBeDefined();
    expect(JSON.stringify(lookup?.function.parameters)).not.toMatch(/\$ref|\$defs/);
    const after = await tools(id);
    expect(after.tools.find((tool) => tool.name === "mcp__fixture__echo")).toMatchObject({
      ownership: "mcp",
      group: "mcp",
      permissionPolicy: "always_ask",
      mcpToolName: "echo",
    });

    platform.fake.enqueue({ text: "echoed" });
    const answered = await send(id, [
      { type: "user.tool_confirmation", tool_use_id: use?.id, result: "allow" },
    ]);
    expect(toolResults(await platform.events(id))).toEqual([
      { name: "mcp__fixture__echo", isError: false, value: "hello over MCP" },
    ]);
    expect(answered.some((event) => event.type === "agent.mcp_tool_result")).toBe(true);
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select(["name", "status"])
      .where("session_id", "=", id)
      .execute();
    expect(ledger).toEqual([{ name: "mcp__fixture__echo", status: "succeeded" }]);
  });

  it("per-tool settings: one tool runs at once while another of the server asks; a disabled one is not offered", async () => {
    const id = await session({
      // MCP tools wait for tool_search unless the agent opts them in (docs/tool-search.md).
      tool_policy: { also_allow: ["group:mcp"] },
      mcp_servers: [
        fixtureServer({
          configs: [
            { name: "echo", permission_policy: "always_allow" },
            { name: "slow", enabled: false },
            { name: "archive", enabled: false },
          ],
        }),
      ],
    });
    platform.fake.enqueue({
      toolCalls: [
        { name: "mcp__fixture__echo", input: { text: "allowed by its config" } },
        { name: "mcp__fixture__fail", input: {} },
      ],
    });
    const paused = await send(id, [say("use both")], "requires_action");
    const uses = paused.filter((event) => event.type === "agent.mcp_tool_use");
    expect(uses.map((use) => [use.name, use.evaluated_permission])).toEqual([
      ["mcp__fixture__echo", "allow"],
      ["mcp__fixture__fail", "ask"],
    ]);
    // The allowed call ran before anyone answered; the asking one did not reach the server.
    expect(toolResults(paused)).toEqual([
      { name: "mcp__fixture__echo", isError: false, value: "allowed by its config" },
    ]);
    expect(fixture.calls.some((call) => call.arguments.text === "allowed by its config")).toBe(true);
    const failsBefore = fixture.calls.filter((call) => call.name === "fail").length;

    // The disabled tool is absent from what the model was offered; the others are there.
    const request = platform.fake.requests.findLast((entry) => entry.path === "/v1/chat/completions");
    if (request === undefined) throw new Error("the fake model got no request");
    const offered = (request.body as { tools: Array<{ function: { name: string } }> }).tools.map(
      (tool) => tool.function.name,
    );
    expect(offered).toEqual(expect.arrayContaining(["mcp__fixture__echo", "mcp__fixture__fail"]));
    expect(offered).not.toContain("mcp__fixture__slow");

    // /tools explains the disabled tool and the config that names a tool the server does not list.
    const set = await tools(id);
    expect(set.tools.find((tool) => tool.name === "mcp__fixture__echo")).toMatchObject({
      permissionPolicy: "always_allow",
      permissionSource: "mcp_server_config",
      permissionSetting: 'configs["echo"].permission_policy of the agent\'s MCP server "fixture"',
    });
    expect(set.tools.find((tool) => tool.name === "mcp__fixture__fail")?.permissionPolicy).toBe("always_ask");
    expect(set.excluded).toContainEqual({
      tool: "mcp__fixture__slow",
      step: "agent",
      rule: "mcp_config:fixture/slow",
      reason: 'configs["slow"].enabled of the agent\'s MCP server "fixture" is false',
    });
    expect(set.excluded).toContainEqual({
      tool: "mcp__fixture__archive",
      step: "agent",
      rule: "mcp_config:fixture/archive",
      reason: 'configs["archive"] of the agent\'s MCP server "fixture" names a tool the server does not list',
    });

    platform.fake.enqueue({ text: "done" });
    const ask = uses.find((use) => use.name === "mcp__fixture__fail");
    await send(id, [{ type: "user.tool_confirmation", tool_use_id: ask?.id, result: "allow" }]);
    expect(fixture.calls.filter((call) => call.name === "fail")).toHaveLength(failsBefore + 1);
    expect(toolResults(await platform.events(id))).toEqual([
      { name: "mcp__fixture__echo", isError: false, value: "allowed by its config" },
      { name: "mcp__fixture__fail", isError: true, value: "the fixture failed on purpose" },
    ]);
  });

  it("turns an isError result into an error result, and vault_list shows names, never values", async () => {
    const id = await session({ mcp_servers: [fixtureServer({ permission_policy: "always_allow" })] });
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "mcp__fixture__fail", input: {} },
          { name: "vault_list", input: {} },
        ],
      },
      { text: "done" },
    );
    const [failed, vault] = toolResults(await send(id, [say("try it")]));
    expect(failed).toEqual({
      name: "mcp__fixture__fail",
      isError: true,
      value: "the fixture failed on purpose",
    });
    expect(vault).toMatchObject({
      name: "vault_list",
      isError: false,
      value: {
        secrets: [expect.objectContaining({ name: "fixture_token", used_by: ["fixture"] })],
        missing: [],
        servers: [{ name: "fixture", status: "ready", tools: 4 }],
      },
    });
  });

  it("offers an environment's servers too, leaving out one named like the agent's", async () => {
    const environment = await platform.request("POST", "/v1/environments", {
      name: "with mcp",
      mcp_servers: [
        fixtureServer({
          name: "team",
          default_config: { permission_policy: "always_allow" },
          configs: [{ name: "fail", enabled: false }],
        }),
        fixtureServer({ url: "http://127.0.0.1:1/shadowed" }),
      ],
    });
    expect(environment.status, JSON.stringify(environment.body)).toBe(200);
    const agent = await platform.createAgent({ mcp_servers: [fixtureServer()] });
    const created = await platform.request("POST", "/v1/sessions", {
      agent: agent,
      environment_id: environment.body.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    platform.fake.enqueue(
      { toolCalls: [{ name: "mcp__team__echo", input: { text: "from the environment" } }] },
      { text: "ok" },
    );
    expect(toolResults(await send(id, [say("use the team server")]))).toEqual([
      { name: "mcp__team__echo", isError: false, value: "from the environment" },
    ]);
    const set = await tools(id);
    expect(set.tools.find((tool) => tool.name === "mcp__fixture__echo")?.permissionPolicy).toBe("always_ask");
    expect(set.excluded).toContainEqual(
      expect.objectContaining({ tool: "mcp__fixture__*", step: "environment", rule: "mcp_server:fixture" }),
    );
    expect(set.tools.find((tool) => tool.name === "mcp__team__echo")?.permissionPolicy).toBe("always_allow");
    expect(set.excluded).toContainEqual(
      expect.objectContaining({ tool: "mcp__team__fail", step: "environment", rule: "mcp_config:team/fail" }),
    );
  });

  it("excludes the tools of a server that does not answer, with the reason in /tools", async () => {
    const id = await session({
      mcp_servers: [fixtureServer({ name: "down", url: `http://127.0.0.1:${await closedPort()}/mcp` })],
    });
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__down__echo", input: { text: "x" } }] }, { text: "ok" });
    const [rejected] = toolResults(await send(id, [say("use the down server")]));
    expect(rejected).toMatchObject({ name: "mcp__down__echo", isError: true });
    const set = await tools(id);
    const exclusion = set.excluded.find((entry) => entry.rule === "mcp_server:down");
    expect(exclusion?.reason).toContain('MCP server "down" could not be reached');
    expect(exclusion?.reason).toContain("ECONNREFUSED");
  });

  it("a restart mid-call is a clear error (the tool is not idempotent) and the next call works", async () => {
    const id = await session({ mcp_servers: [fixtureServer({ permission_policy: "always_allow" })] });
    platform.fake.enqueue(
      { toolCalls: [{ name: "mcp__fixture__slow", input: { ms: 20_000 } }] },
      { text: "hm" },
    );
    const before = (await platform.events(id)).at(-1)?.seq ?? 0;
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [say("wait a while")] });
    await waitFor(() => fixture.calls.some((call) => call.name === "slow" && call.arguments.ms === 20_000));
    await fixture.restart();
    await platform.waitForIdle(id, "end_turn", before, 30_000);
    const [lost] = toolResults((await platform.events(id)).filter((event) => event.seq > before));
    expect(lost).toMatchObject({ name: "mcp__fixture__slow", isError: true });
    expect(lost?.value).toContain("closed the connection during the call");
    expect(lost?.value).toContain("outcome is unknown");

    platform.fake.enqueue(
      { toolCalls: [{ name: "mcp__fixture__echo", input: { text: "after restart" } }] },
      { text: "ok" },
    );
    expect(toolResults(await send(id, [say("again")]))).toEqual([
      { name: "mcp__fixture__echo", isError: false, value: "after restart" },
    ]);
  });

  it("an interrupt cancels a running MCP call at the server", async () => {
    const id = await session({ mcp_servers: [fixtureServer({ permission_policy: "always_allow" })] });
    platform.fake.enqueue({ toolCalls: [{ name: "mcp__fixture__slow", input: { ms: 30_000 } }] });
    const before = (await platform.events(id)).at(-1)?.seq ?? 0;
    const cancelledBefore = fixture.cancelled.length;
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [say("wait long")] });
    await waitFor(() => fixture.calls.some((call) => call.name === "slow" && call.arguments.ms === 30_000));
    const started = Date.now();
    await platform.request("POST", `/v1/sessions/${id}/events`, { events: [{ type: "user.interrupt" }] });
    await platform.waitForIdle(id, "end_turn", before, 15_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    const events = (await platform.events(id)).filter((event) => event.seq > before);
    const [cancelled] = toolResults(events);
    expect(cancelled).toMatchObject({ name: "mcp__fixture__slow", isError: true });
    expect(cancelled?.value).toContain("cancelled by an interrupt");
    expect(events.some((event) => event.type === "agent.mcp_tool_result")).toBe(true);
    await waitFor(() => fixture.cancelled.length > cancelledBefore);
    const ledger = await platform.db
      .selectFrom("tool_calls")
      .select("status")
      .where("session_id", "=", id)
      .execute();
    expect(ledger).toEqual([{ status: "cancelled" }]);
  });

  it("the vault's value reached the MCP server and nothing else: no event, ledger row, span or log", async () => {
    expect(fixture.headers.some((headers) => headers.authorization === `Bearer ${token}`)).toBe(true);
    expect(await platform.secretFoundIn(token)).toEqual([]);
    expect(await platform.db.selectFrom("spans").select("name").limit(1).execute()).toHaveLength(1);
    const sealed = await platform.db.selectFrom("vault_secrets").select("sealed").executeTakeFirstOrThrow();
    expect(sealed.sealed.includes(Buffer.from(token))).toBe(false);
  });
});

/** A local port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
