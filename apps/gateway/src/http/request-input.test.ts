import { ApiError, ApiKeyPage } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;
let sessionId: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.tenant.ownerKey;
  const agent = await gw.request("POST", "/v1/agents", { key, body: agentBody() });
  const session = await gw.request("POST", "/v1/sessions", {
    key,
    body: { agent: (agent.body as { id: string }).id },
  });
  sessionId = (session.body as { id: string }).id;
});
afterAll(async () => {
  await gw?.close();
});

function errorOf(response: { status: number; body: unknown }) {
  return ApiError.parse(response.body).error;
}

describe("create and update bodies are strict", () => {
  it("an API key without a name is refused and none is made", async () => {
    const response = await gw.request("POST", "/v1/api_keys", { key, body: {} });
    expect(response.status).toBe(400);
    expect(errorOf(response).message).toContain("name");
    const keys = ApiKeyPage.parse((await gw.request("GET", "/v1/api_keys", { key })).body);
    expect(keys.data).toHaveLength(1);
  });

  it.each([
    ["POST", "/v1/api_keys", { name: "ci", role: "member", scopes: ["all"] }, "scopes"],
    ["POST", "/v1/agents", agentBody({ temperature: 2 }), "temperature"],
    ["POST", "/v1/agents", agentBody({ model: { provider: "openai", id: "m", api_key: "x" } }), "api_key"],
    ["POST", "/v1/environments", { name: "e", config: { privileged: true } }, "privileged"],
    ["POST", "/v1/sessions", { agent: "agent_x", owner: "someone" }, "owner"],
    ["POST", "/v1/sessions/{session}", { title: "t", status: "idle" }, "status"],
    [
      "POST",
      "/v1/sessions/{session}/events",
      { events: [{ type: "user.message", content: [{ type: "text", text: "hi" }], seq: 1 }] },
      "seq",
    ],
  ])("%s %s with an unknown field → 400 naming it", async (method, path, body, field) => {
    const response = await gw.request(method, path.replace("{session}", sessionId), { key, body });
    expect(response.status).toBe(400);
    expect(errorOf(response).message).toContain(field);
  });
});

describe("NUL characters and lone surrogates are a 400, never a 500", () => {
  it.each([
    ["a path id", "GET", "/v1/agents/a%00b", undefined],
    ["a session path id", "GET", "/v1/sessions/sesn%00x/events", undefined],
    ["a query string", "GET", "/v1/sessions?agent_id=a%00b", undefined],
    [
      "a message",
      "POST",
      "/v1/sessions/{session}/events",
      '{"events":[{"type":"user.message","content":[{"type":"text","text":"a\\u0000b"}]}]}',
    ],
    [
      "a lone surrogate in a message",
      "POST",
      "/v1/sessions/{session}/events",
      '{"events":[{"type":"user.message","content":[{"type":"text","text":"a\\ud800b"}]}]}',
    ],
    ["a metadata key", "POST", "/v1/sessions/{session}", '{"metadata":{"k\\u0000":"v"}}'],
    ["an agent name", "POST", "/v1/agents", JSON.stringify(agentBody({ name: "bad\u0000name" }))],
  ])("%s", async (_, method, path, rawBody) => {
    const response = await gw.request(method, path.replace("{session}", sessionId), {
      key,
      ...(rawBody !== undefined && { rawBody }),
    });
    expect(response.status).toBe(400);
    expect(errorOf(response).type).toBe("invalid_request_error");
  });

  it("leaves the session usable", async () => {
    const response = await gw.request("POST", `/v1/sessions/${sessionId}/events`, {
      key,
      body: { events: [{ type: "user.message", content: [{ type: "text", text: "hello 😀" }] }] },
    });
    expect(response.status).toBe(202);
  });
});
