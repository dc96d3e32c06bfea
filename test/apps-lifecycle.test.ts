import { randomBytes } from "node:crypto";
import { connectBus } from "@wakeloop/bus";
import {
  AppProcess,
  cleanupPrefix,
  createTestDatabase,
  type TestDatabase,
  testNatsUrl,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Every app runs as its own process, started the way operators start it, against this file's own
// database and subject prefix; ports are 0 so the OS picks free ones and each app logs its own.

const APPS = ["gateway", "orchestrator", "harness-worker", "sandbox-runner", "memory-retrieval"] as const;
const NATS_URL = testNatsUrl();
const READY_TIMEOUT_MS = 30_000;
const EXIT_TIMEOUT_MS = 15_000;

let testDb: TestDatabase;
const started: AppProcess[] = [];
/** Each app's own subject prefix: the streams it creates are removed after the file. */
const prefixes: string[] = [];

function startApp(app: string, env: Record<string, string>): AppProcess {
  const prefix = `lifecycle_${randomBytes(4).toString("hex")}`;
  prefixes.push(prefix);
  const service = new AppProcess(app, {
    DATABASE_URL: testDb.appUrl,
    NATS_URL,
    // The shared test NATS has no auth.
    NATS_ALLOW_ANONYMOUS: "true",
    WL_SUBJECT_PREFIX: prefix,
    HEALTH_PORT: "0",
    METRICS_PORT: "0",
    PORT: "0",
    LOG_LEVEL: "info",
    ...env,
  });
  started.push(service);
  return service;
}

beforeAll(async () => {
  // Already migrated by createTestDatabase, as the deployment's migrate step would.
  testDb = await createTestDatabase();
});

afterAll(async () => {
  for (const service of started) service.kill("SIGKILL");
  await Promise.all(started.map((service) => service.exited));
  const bus = await connectBus({ servers: NATS_URL, name: "apps-lifecycle-cleanup" });
  try {
    for (const prefix of prefixes) await cleanupPrefix(bus.jsm, prefix);
  } finally {
    await bus.close();
  }
  await testDb?.drop();
});

describe("app lifecycle", () => {
  it("every app becomes ready, then exits 0 on SIGTERM", { timeout: 90_000 }, async () => {
    const apps = APPS.map((app) => ({ app, service: startApp(app, {}) }));

    for (const { app, service } of apps) {
      const ready = await service.record("ready", READY_TIMEOUT_MS);
      expect(ready, app).toMatchObject({ service: app, port: expect.any(Number) });
      const response = await fetch(`http://127.0.0.1:${String(ready.port)}/readyz`);
      expect(response.status, app).toBe(200);
      expect(await response.json(), app).toEqual({
        ready: true,
        checks: { postgres: true, nats: true, app: true },
      });
      expect((await fetch(`http://127.0.0.1:${String(ready.port)}/healthz`)).status, app).toBe(200);
    }

    for (const { service } of apps) service.kill("SIGTERM");
    for (const { app, service } of apps) {
      expect(await service.exitCode(EXIT_TIMEOUT_MS), app).toBe(0);
      expect(await service.record("stopped", 0), app).toMatchObject({ clean: true });
    }
  });

  it("exits 1 naming every bad variable when the configuration is invalid", async () => {
    const service = startApp("orchestrator", { NATS_URL: "not a url", HEALTH_PORT: "health" });
    expect(await service.exitCode(EXIT_TIMEOUT_MS)).toBe(1);
    expect(service.stderr).toMatch(/NATS_URL: .+/);
    expect(service.stderr).toMatch(/HEALTH_PORT: .+/);
    expect(service.records.some((record) => record.msg === "ready")).toBe(false);
  });

  it("exits 1 when its database role bypasses row-level security (the owner's url)", async () => {
    const service = startApp("memory-retrieval", { DATABASE_URL: testDb.url });
    expect(await service.exitCode(EXIT_TIMEOUT_MS)).toBe(1);
    expect(await service.record("start-up failed", 0)).toMatchObject({
      level: "fatal",
      err: { code: "database_role_bypasses_rls" },
    });
  });

  it("exits 1 with a logged reason when Postgres cannot be reached at start-up", async () => {
    const missing = new URL(testDb.url);
    missing.pathname = `/wl_missing_${randomBytes(4).toString("hex")}`;
    const service = startApp("memory-retrieval", { DATABASE_URL: missing.toString() });
    expect(await service.exitCode(EXIT_TIMEOUT_MS)).toBe(1);
    expect(await service.record("start-up failed", 0)).toMatchObject({
      level: "fatal",
      err: { code: "postgres_unreachable" },
    });
  });
});
