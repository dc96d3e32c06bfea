import { Agent, ApiError, CreatedApiKey, Session } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";
import { openSse, type SseConnection } from "../testing/sse-client";

let gw: GatewayFixture;
let sessionId: string;
const open: SseConnection[] = [];

beforeAll(async () => {
  gw = await startGateway({ sseKeepAliveMs: 1_000, quotas: { streamsPerKey: 1 } });
  const key = gw.tenant.ownerKey;
  const agent = Agent.parse((await gw.request("POST", "/v1/agents", { key, body: agentBody() })).body);
  sessionId = Session.parse(
    (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
  ).id;
});
afterAll(async () => {
  await Promise.all(open.map((connection) => connection.close()));
  await gw?.close();
});

async function memberKey(): Promise<CreatedApiKey> {
  const created = await gw.request("POST", "/v1/api_keys", {
    key: gw.tenant.ownerKey,
    body: { name: "streamer", role: "member" },
  });
  return CreatedApiKey.parse(created.body);
}

async function stream(key: string): Promise<SseConnection> {
  const connection = await openSse(`${gw.url}/v1/sessions/${sessionId}/events/stream`, {
    authorization: `Bearer ${key}`,
  });
  open.push(connection);
  return connection;
}

describe("event stream limits", () => {
  it("ends a stream at the first keep-alive after its key is revoked", async () => {
    const member = await memberKey();
    const connection = await stream(member.key);
    expect(connection.status).toBe(200);
    await connection.until((c) => c.comments.includes("keep-alive"));
    expect(connection.ended).toBe(false);
    const revoked = await gw.request("DELETE", `/v1/api_keys/${member.id}`, { key: gw.tenant.ownerKey });
    expect(revoked.status).toBe(200);
    await connection.until((c) => c.ended);
  });

  it("refuses a second stream of a key limited to one with a 429 and Retry-After", async () => {
    const member = await memberKey();
    const first = await stream(member.key);
    expect(first.status).toBe(200);
    const response = await fetch(`${gw.url}/v1/sessions/${sessionId}/events/stream`, {
      headers: { authorization: `Bearer ${member.key}` },
    });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(ApiError.parse(await response.json()).error.type).toBe("rate_limit_error");
    await first.close();
    await expect.poll(async () => (await stream(member.key)).status).toBe(200);
  });
});
