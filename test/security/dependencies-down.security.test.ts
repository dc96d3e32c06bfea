import { ApiError } from "@wakeloop/contracts";
import { startTcpProxy, type TcpProxy } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "./gateway-process";

// Issue #8 point 11: Postgres going away is a retryable 503 with Retry-After, never a 500. The shared
// Postgres is not stopped: the gateway process reaches its database through a proxy this test cuts.

let proxy: TcpProxy;
let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGatewayProcess({
    databaseUrl: async (url) => {
      const direct = new URL(url);
      proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
      direct.hostname = "127.0.0.1";
      direct.port = String(proxy.port);
      return direct.toString();
    },
  });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
});

function call(method: string, path: string, body?: unknown) {
  return fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${gateway.ownerKey}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

describe("Postgres unreachable", () => {
  it("answers every route with a retryable 503 and Retry-After, not a 500", async () => {
    const agent = { name: "a", model: { provider: "openai_compatible", id: "m" } };
    expect((await call("GET", "/v1/agents")).status).toBe(200);
    expect((await call("POST", "/v1/agents", agent)).status).toBe(200);

    await proxy.cut();

    for (const [method, path, body] of [
      ["GET", "/v1/agents", undefined],
      ["POST", "/v1/agents", agent],
      ["GET", "/v1/sessions/sesn_missing", undefined],
      ["POST", "/v1/sessions", { agent: "agent_missing" }],
      ["GET", "/v1/api_keys", undefined],
    ] as const) {
      const response = await call(method, path, body);
      const text = await response.text();
      expect({ method, path, status: response.status }, text).toEqual({ method, path, status: 503 });
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(ApiError.parse(JSON.parse(text)).error.type).toBe("api_error");
    }
  });
});
