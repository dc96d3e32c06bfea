import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { connectBus } from "@wakeloop/bus";
import { ApiError } from "@wakeloop/contracts";
import {
  AppProcess,
  cleanupPrefix,
  createTestDatabase,
  startTcpProxy,
  type TcpProxy,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Issue #8 point 11: Postgres going away is a retryable 503 with Retry-After, never a 500. The shared
// Postgres is not stopped: the gateway process reaches its database through a proxy this test cuts.

const ROOT = join(import.meta.dirname, "..", "..");
let database: TestDatabase;
let proxy: TcpProxy;
let gateway: AppProcess;
let baseUrl: string;
let key: string;
const prefix = testPrefix();

beforeAll(async () => {
  database = await createTestDatabase();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--import",
      "tsx",
      "apps/gateway/src/cli/create-tenant.ts",
      "--name",
      "deps",
      "--json",
      "--database-url",
      database.url,
    ],
    { cwd: ROOT },
  );
  key = (JSON.parse(stdout) as { owner_key: { key: string } }).owner_key.key;
  const direct = new URL(database.url);
  proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const proxied = new URL(database.url);
  proxied.hostname = "127.0.0.1";
  proxied.port = String(proxy.port);
  gateway = new AppProcess(
    "gateway",
    {
      DATABASE_URL: proxied.toString(),
      NATS_URL: testNatsUrl(),
      WL_SUBJECT_PREFIX: prefix,
      HEALTH_PORT: "0",
      PORT: "0",
      LOG_LEVEL: "info",
    },
    { cwd: ROOT },
  );
  const listening = await gateway.record("API listening", 60_000);
  baseUrl = `http://127.0.0.1:${String(listening.port)}`;
}, 120_000);

afterAll(async () => {
  gateway?.kill("SIGTERM");
  await gateway?.exitCode(15_000).catch(() => undefined);
  const bus = await connectBus({ servers: testNatsUrl(), name: "deps-cleanup" });
  try {
    await cleanupPrefix(bus.jsm, prefix);
  } finally {
    await bus.close();
  }
  await database?.drop();
});

function call(method: string, path: string, body?: unknown) {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
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
