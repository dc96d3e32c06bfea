import { Agent, Session } from "@wakeloop/contracts";
import { append } from "@wakeloop/db";
import { SessionToolSet } from "@wakeloop/tool-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ globalToolPolicy: { deny: ["delete_state"] } });
  key = gw.tenant.ownerKey;
});
afterAll(async () => {
  await gw?.close();
});

async function sessionWith(agentOverrides: Record<string, unknown>): Promise<string> {
  const agent = Agent.parse(
    (await gw.request("POST", "/v1/agents", { key, body: agentBody(agentOverrides) })).body,
  );
  return Session.parse((await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body)
    .id;
}

async function toolsOf(sessionId: string) {
  const response = await gw.request("GET", `/v1/sessions/${sessionId}/tools`, { key });
  expect(response.status).toBe(200);
  return SessionToolSet.parse(response.body);
}

describe("GET /v1/sessions/{id}/tools", () => {
  it("lists the offered tools and says which step excluded each other tool", async () => {
    const sessionId = await sessionWith({
      tool_policy: { deny: ["ask_user"] },
      tools: [
        {
          type: "custom",
          name: "lookup_order",
          description: "Find an order",
          input_schema: { type: "object" },
        },
      ],
    });
    const set = await toolsOf(sessionId);
    const { tools, excluded } = set;
    const offered = tools.map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(["get_state", "lookup_order"]));
    expect(offered).not.toContain("ask_user");
    // The request offers the core, tool_search and the custom tool; the other callable tools wait.
    expect(set.offered).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: "get_state", rule: "core" }),
        expect.objectContaining({ tool: "lookup_order", rule: "custom" }),
        expect.objectContaining({ tool: "tool_search", rule: "search" }),
      ]),
    );
    expect(set.deferred).toContainEqual(
      expect.objectContaining({ tool: "list_state_keys", rule: "deferred" }),
    );
    expect([...set.offered, ...set.deferred].map((entry) => entry.tool).sort()).toEqual([...offered].sort());
    expect(excluded).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: "ask_user", step: "agent" }),
        expect.objectContaining({ tool: "delete_state", step: "global" }),
        expect.objectContaining({
          tool: "shell_run",
          step: "runtime_gating",
          rule: "availability:sandbox.ready",
        }),
      ]),
    );
  });

  it("follows the session's state: sandbox tools appear once its sandbox is ready", async () => {
    const sessionId = await sessionWith({});
    expect((await toolsOf(sessionId)).tools.map((tool) => tool.name)).not.toContain("shell_run");
    await append(gw.db, {
      tenantId: gw.tenant.id,
      sessionId,
      events: [{ type: "sandbox.status", status: "ready" }],
    });
    expect((await toolsOf(sessionId)).tools.map((tool) => tool.name)).toContain("shell_run");
  });

  it("without a search backend, web_search is excluded by runtime gating and says what to configure", async () => {
    const { tools, excluded } = await toolsOf(await sessionWith({}));
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["web_fetch", "web_read"]));
    expect(excluded).toContainEqual({
      tool: "web_search",
      step: "runtime_gating",
      rule: "availability:web.search",
      reason: "needs web.search; the operator configured no search backend (WEB_SEARCH_URL)",
    });
  });

  it("uses the session's pinned agent version, not the latest", async () => {
    const agent = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body);
    const session = Session.parse(
      (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
    );
    await gw.request("POST", `/v1/agents/${agent.id}`, {
      key,
      body: { tool_policy: { deny: ["get_state"] } },
    });
    expect((await toolsOf(session.id)).tools.map((tool) => tool.name)).toContain("get_state");
  });
});
