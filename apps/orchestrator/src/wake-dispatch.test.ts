import { type Bus, connectBus, ensureStreams } from "@wakeloop/bus";
import { acquireLease, append } from "@wakeloop/db";
import {
  cleanupPrefix,
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedWake,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatchHeldWakes, dispatchWakes } from "./wake-dispatch";

// Against real Postgres and NATS (this file's own database and subject prefix): what reaches the wake
// work queue is what the workers would run.

let database: TestDatabase;
let bus: Bus;

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "wake-dispatch-test" });
  await ensureStreams(bus.jsm, bus.catalog);
});

afterAll(async () => {
  if (bus) {
    await cleanupPrefix(bus.jsm, bus.subjects.prefix);
    await bus.close();
  }
  await database?.drop();
});

async function queuedJobs(): Promise<number> {
  return (await bus.jsm.streams.info(bus.catalog.wakes.stream.name)).state.messages;
}

async function heldWakes(seeded: SeededAgent, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) ids.push((await seedWake(database.db, seeded)).wakeId);
  return ids;
}

describe("wake dispatch", () => {
  it("publishes a tenant's jobs up to its limit and the next one when a wake ends", async () => {
    const seeded = await seedAgent(database.db);
    const [first] = await heldWakes(seeded, 3);
    const before = await queuedJobs();
    expect(await dispatchWakes(database.db, bus, seeded.tenantId, 2)).toBe(2);
    expect(await dispatchWakes(database.db, bus, seeded.tenantId, 2)).toBe(0);
    expect(await queuedJobs()).toBe(before + 2);

    const wake = await database.db
      .selectFrom("wakes")
      .selectAll()
      .where("id", "=", first ?? "")
      .executeTakeFirstOrThrow();
    const lease = await acquireLease(database.db, {
      tenantId: seeded.tenantId,
      sessionId: wake.session_id,
      wakeId: wake.id,
      workerId: "w",
      ttlMs: 30_000,
    });
    await append(database.db, {
      tenantId: seeded.tenantId,
      sessionId: wake.session_id,
      events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
      fence: lease?.epoch ?? 0,
      finishWake: { wakeId: wake.id, epoch: lease?.epoch ?? 0, status: "completed" },
    });
    // The periodic backstop finds the room the ended wake left, with no event to trigger it.
    expect(await dispatchHeldWakes(database.db, bus, 2)).toBe(1);
    expect(await queuedJobs()).toBe(before + 3);
  });
});
