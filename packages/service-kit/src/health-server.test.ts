import { afterEach, describe, expect, it } from "vitest";
import { type HealthServer, type ReadinessChecks, startHealthServer } from "./health-server";

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
});

async function serve(readiness: () => Promise<ReadinessChecks>) {
  server = await startHealthServer({ port: 0, host: "127.0.0.1", readiness });
  const base = `http://127.0.0.1:${server.port}`;
  return async (path: string) => {
    const response = await fetch(`${base}${path}`);
    return { status: response.status, body: (await response.json()) as unknown };
  };
}

describe("health server", () => {
  it("is ready only while every check passes, and live regardless", async () => {
    let checks: ReadinessChecks = { postgres: true, nats: true };
    const get = await serve(async () => checks);

    expect(await get("/readyz")).toEqual({ status: 200, body: { ready: true, checks } });
    checks = { postgres: true, nats: false };
    expect(await get("/readyz")).toEqual({ status: 503, body: { ready: false, checks } });
    expect(await get("/healthz")).toEqual({ status: 200, body: { status: "ok" } });
  });

  it("answers 503 when the readiness check itself fails, and 404 elsewhere", async () => {
    const get = await serve(() => Promise.reject(new Error("probe broke")));
    expect(await get("/readyz")).toEqual({ status: 503, body: { ready: false } });
    expect((await get("/metrics")).status).toBe(404);
  });
});
