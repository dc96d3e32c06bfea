import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append } from "./event-store";
import { acquireLease } from "./lease";
import { claimWakesToPublish, tenantsWithHeldWakes } from "./wake-dispatch";
import { openWake } from "./wakes";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 10 });
});
afterAll(() => testDb.drop());

/** A tenant with `count` sessions, each with a queued wake that no one has published yet. */
async function tenantWithHeldWakes(count: number): Promise<{ seeded: SeededAgent; wakeIds: string[] }> {
  const seeded = await seedAgent(testDb.db);
  const wakeIds: string[] = [];
  for (let index = 0; index < count; index++) {
    const session = await seedSession(testDb.db, seeded);
    const wake = await openWake(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      reason: "user_message",
      dueAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)),
    });
    if (wake === null) throw new Error("a new session has no open wake");
    wakeIds.push(wake.id);
  }
  return { seeded, wakeIds };
}

describe("claimWakesToPublish", () => {
  it("publishes a tenant's oldest held wakes up to its limit, and more only as wakes end", async () => {
    const { seeded, wakeIds } = await tenantWithHeldWakes(5);
    const tenantId = seeded.tenantId;
    const first = await claimWakesToPublish(testDb.db, { tenantId, maxInFlight: 2 });
    expect(first.map((wake) => wake.id)).toEqual(wakeIds.slice(0, 2));
    expect(first.every((wake) => wake.published_at !== null)).toBe(true);
    expect(await claimWakesToPublish(testDb.db, { tenantId, maxInFlight: 2 })).toEqual([]);
    expect(await tenantsWithHeldWakes(testDb.db, 1_000)).toContain(tenantId);

    // A running wake still counts; one that finished makes room for exactly one more.
    const [running, done] = first;
    if (running === undefined || done === undefined) throw new Error("two wakes were claimed");
    await acquireLease(testDb.db, {
      tenantId,
      sessionId: running.session_id,
      wakeId: running.id,
      workerId: "w",
      ttlMs: 30_000,
    });
    expect(await claimWakesToPublish(testDb.db, { tenantId, maxInFlight: 2 })).toEqual([]);
    const lease = await acquireLease(testDb.db, {
      tenantId,
      sessionId: done.session_id,
      wakeId: done.id,
      workerId: "w",
      ttlMs: 30_000,
    });
    await append(testDb.db, {
      tenantId,
      sessionId: done.session_id,
      events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
      fence: lease?.epoch ?? 0,
      finishWake: { wakeId: done.id, epoch: lease?.epoch ?? 0, status: "completed" },
    });
    const next = await claimWakesToPublish(testDb.db, { tenantId, maxInFlight: 2 });
    expect(next.map((wake) => wake.id)).toEqual([wakeIds[2]]);
  });

  it("keeps each tenant's own room: another tenant's burst takes none of it", async () => {
    const burst = await tenantWithHeldWakes(6);
    const single = await tenantWithHeldWakes(1);
    await claimWakesToPublish(testDb.db, { tenantId: burst.seeded.tenantId, maxInFlight: 3 });
    const claimed = await claimWakesToPublish(testDb.db, {
      tenantId: single.seeded.tenantId,
      maxInFlight: 3,
    });
    expect(claimed.map((wake) => wake.id)).toEqual(single.wakeIds);
  });

  it("never goes past the limit when many replicas claim at once", async () => {
    const { seeded } = await tenantWithHeldWakes(12);
    const claims = await Promise.all(
      Array.from({ length: 8 }, () =>
        claimWakesToPublish(testDb.db, { tenantId: seeded.tenantId, maxInFlight: 3 }),
      ),
    );
    const ids = claims.flat().map((wake) => wake.id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });
});
