import { Writable } from "node:stream";
import { type Bus, connectBus, type ServiceHandle } from "@wakeloop/bus";
import type { SandboxReleaseRequest } from "@wakeloop/contracts";
import { createSandboxClient } from "@wakeloop/sandbox-client";
import { serveReleaseStandIn } from "@wakeloop/sandbox-client/testing";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedEnvironment,
  seedSession,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { releaseSandbox } from "./sandbox-release";

// Against real Postgres and NATS. The runner is played by a stand-in service on this file's own
// subject prefix, so its answers (released, nothing found, hung) can be chosen; with no stand-in
// serving, a request finds no responders, as when every runner is down.

let database: TestDatabase;
let bus: Bus;
let seeded: SeededAgent;
let served: ServiceHandle | null = null;
const records: Record<string, unknown>[] = [];
const log = createLogger({
  service: "sandbox-release-test",
  level: "debug",
  destination: new Writable({
    write(chunk: Buffer, _encoding, done) {
      records.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  }),
});

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "sandbox-release-test" });
  seeded = await seedAgent(database.db);
});

afterEach(async () => {
  await served?.stop();
  served = null;
});

afterAll(async () => {
  await bus?.close();
  await database?.drop();
});

async function newSession(withEnvironment: boolean): Promise<string> {
  const environmentId = withEnvironment ? await seedEnvironment(database.db, seeded) : undefined;
  return (await seedSession(database.db, seeded, { environmentId })).id;
}

/** A runner stand-in that records release requests and answers with `answer`. */
function serveRunner(answer: () => Promise<{ released: boolean }>): SandboxReleaseRequest[] {
  const standIn = serveReleaseStandIn(bus, answer);
  served = standIn.handle;
  return standIn.requests;
}

const deps = () => ({ db: database.db, sandbox: createSandboxClient(bus, { releaseTimeoutMs: 500 }), log });
const target = (sessionId: string) => ({ tenantId: seeded.tenantId, sessionId });

describe("releaseSandbox", () => {
  it("asks the runner to release a session that has an environment", async () => {
    const requests = serveRunner(async () => ({ released: true }));
    const id = await newSession(true);
    await releaseSandbox(deps(), target(id), 1);
    expect(requests).toEqual([{ session_id: id, tenant_id: seeded.tenantId }]);
    expect(records).toContainEqual(
      expect.objectContaining({ session_id: id, released: true, msg: "sandbox released" }),
    );
  });

  it("accepts a runner that holds nothing for the session", async () => {
    const requests = serveRunner(async () => ({ released: false }));
    const id = await newSession(true);
    await expect(releaseSandbox(deps(), target(id), 1)).resolves.toBeUndefined();
    expect(requests).toHaveLength(1);
  });

  it("asks nothing for a session without an environment, or without a sandbox deployment", async () => {
    const requests = serveRunner(async () => ({ released: true }));
    await releaseSandbox(deps(), target(await newSession(false)), 1);
    await releaseSandbox({ ...deps(), sandbox: null }, target(await newSession(true)), 1);
    expect(requests).toEqual([]);
  });

  it("fails retryably at once when no runner is listening", async () => {
    const id = await newSession(true);
    const failure = releaseSandbox(deps(), target(id), 3);
    await expect(failure).rejects.toMatchObject({ code: "bus_no_responders", retryable: true });
    expect(records).toContainEqual(
      expect.objectContaining({
        session_id: id,
        delivery: 3,
        msg: "sandbox release failed; the event will be redelivered",
      }),
    );
  });

  it("gives up on a hung runner after the release timeout, retryably", async () => {
    serveRunner(() => new Promise((resolve) => setTimeout(() => resolve({ released: true }), 1_500)));
    const started = Date.now();
    await expect(releaseSandbox(deps(), target(await newSession(true)), 1)).rejects.toMatchObject({
      code: "bus_request_timeout",
      retryable: true,
    });
    expect(Date.now() - started).toBeLessThan(1_400);
  });
});
