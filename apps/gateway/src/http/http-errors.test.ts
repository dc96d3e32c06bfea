import { Writable } from "node:stream";
import { Agent, ApiError, Session } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

const BODY_LIMIT = 4_096;
const logLines: string[] = [];
let gw: GatewayFixture;
let key: string;
let sessionId: string;

beforeAll(async () => {
  gw = await startGateway({
    bodyLimitBytes: BODY_LIMIT,
    logDestination: new Writable({
      write(chunk, _encoding, done) {
        logLines.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    }),
  });
  key = gw.tenant.ownerKey;
  const agent = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body);
  sessionId = Session.parse(
    (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
  ).id;
});
afterAll(async () => {
  await gw?.close();
});

function apiError(response: { status: number; body: unknown }) {
  return ApiError.parse(response.body).error;
}

describe("bad input gets a 4xx with details, never a 500", () => {
  it("malformed JSON → 400", async () => {
    const response = await gw.request("POST", "/v1/agents", { key, rawBody: '{"name": "x",' });
    expect(response.status).toBe(400);
    expect(apiError(response).type).toBe("invalid_request_error");
  });

  it("a body that does not match the schema → 400 with the zod issues", async () => {
    const response = await gw.request("POST", "/v1/agents", {
      key,
      body: { name: "", model: { provider: "x" } },
    });
    expect(response.status).toBe(400);
    const error = apiError(response);
    expect(error.type).toBe("invalid_request_error");
    const issues = (error.details as { issues: { path: unknown[] }[] }).issues;
    expect(issues.map((issue) => issue.path[0])).toEqual(expect.arrayContaining(["name", "model"]));
  });

  it.each([
    ["null", "null"],
    ["an array", "[1,2]"],
    ["a string", '"hello"'],
    ["a prototype-poisoning object", '{"__proto__": {"polluted": true}}'],
  ])("a JSON body that is %s → 400", async (_what, rawBody) => {
    const response = await gw.request("POST", "/v1/agents", { key, rawBody });
    expect(response.status).toBe(400);
    expect(apiError(response).type).toBe("invalid_request_error");
  });

  it("a missing body where one is needed → 400", async () => {
    const response = await gw.request("POST", `/v1/sessions/${sessionId}/events`, { key });
    expect(response.status).toBe(400);
  });

  it("a body over the limit → 413 payload_too_large_error", async () => {
    const response = await gw.request("POST", `/v1/sessions/${sessionId}/events`, {
      key,
      body: { events: [{ type: "user.message", content: [{ type: "text", text: "x".repeat(BODY_LIMIT) }] }] },
    });
    expect(response.status).toBe(413);
    expect(apiError(response).type).toBe("payload_too_large_error");
  });

  it("an unsupported content type → 415", async () => {
    const response = await gw.request("POST", "/v1/agents", {
      key,
      rawBody: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(response.status).toBe(415);
    expect(apiError(response).type).toBe("invalid_request_error");
  });

  it("invalid events: empty batch, unknown type, an event clients may not send → 400", async () => {
    for (const events of [[], [{ type: "user.dance" }], [{ type: "agent.message", content: [] }]]) {
      const response = await gw.request("POST", `/v1/sessions/${sessionId}/events`, {
        key,
        body: { events },
      });
      expect(response.status).toBe(400);
      expect(apiError(response).details).toHaveProperty("issues");
    }
  });

  it("invalid query and header values → 400", async () => {
    expect((await gw.request("GET", "/v1/sessions?limit=0", { key })).status).toBe(400);
    expect((await gw.request("GET", "/v1/sessions?status=sleeping", { key })).status).toBe(400);
    expect((await gw.request("GET", `/v1/sessions/${sessionId}/events?after_seq=-1`, { key })).status).toBe(
      400,
    );
    const stream = await gw.request("GET", `/v1/sessions/${sessionId}/events/stream`, {
      key,
      headers: { "last-event-id": "yesterday" },
    });
    expect(stream.status).toBe(400);
  });

  it("unknown routes and ids → 404 in the API's error shape", async () => {
    const route = await gw.request("GET", "/v1/nothing-here", { key });
    expect(route.status).toBe(404);
    expect(apiError(route).type).toBe("not_found_error");
    const session = await gw.request("GET", "/v1/sessions/sesn_doesnotexist", { key });
    expect(session.status).toBe(404);
  });
});

describe("body-less requests", () => {
  it("accept an empty body sent as application/json", async () => {
    const agent = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body);
    const session = Session.parse(
      (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
    );
    const response = await gw.request("POST", `/v1/sessions/${session.id}/archive`, { key, rawBody: "" });
    expect(response.status).toBe(200);
    expect(Session.parse(response.body).status).toBe("terminated");
  });
});

describe("request logging", () => {
  it("binds the tenant and session ids to the request's log records", async () => {
    await gw.request("GET", `/v1/sessions/${sessionId}`, { key });
    const records = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const completed = records.find(
      (record) => record.msg === "request completed" && record.session_id === sessionId,
    );
    expect(completed).toMatchObject({ tenant_id: gw.tenant.id, service: "gateway-test" });
  });
});
