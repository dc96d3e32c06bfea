import { acquireLease } from "@wakeloop/db";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedWake,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepLease } from "./lease-keeper";

const TTL_MS = 600;
const log = createLogger({ service: "lease-keeper-test", level: "silent" });

let database: TestDatabase;
let tenants: SeededAgent[];

beforeAll(async () => {
  database = await createTestDatabase();
  tenants = [await seedAgent(database.db), await seedAgent(database.db)];
});
afterAll(() => database.drop());

/** A running wake of `seeded` leased for TTL_MS, as a worker holds it. */
async function leasedWake(seeded: SeededAgent) {
  const { sessionId, wakeId } = await seedWake(database.db, seeded);
  const lease = await acquireLease(database.appDb, {
    tenantId: seeded.tenantId,
    sessionId,
    wakeId,
    workerId: "w",
    ttlMs: TTL_MS,
  });
  if (lease === null) throw new Error("no lease");
  return { tenantId: seeded.tenantId, wakeId, epoch: lease.epoch };
}

const expiry = async (wakeId: string) =>
  (
    await database.db
      .selectFrom("wakes")
      .select("lease_expires_at")
      .where("id", "=", wakeId)
      .executeTakeFirstOrThrow()
  ).lease_expires_at?.getTime() ?? 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("keepLease", () => {
  it("keeps every held lease of several tenants alive past its ttl, and lets go on stop", async () => {
    const wakes = await Promise.all([0, 0, 0, 1, 1].map((n) => leasedWake(tenants[n] as SeededAgent)));
    const workingCalls = new Map<string, number>();
    const kept = wakes.map((wake) =>
      keepLease({
        db: database.appDb,
        log,
        ...wake,
        ttlMs: TTL_MS,
        working: () => workingCalls.set(wake.wakeId, (workingCalls.get(wake.wakeId) ?? 0) + 1),
      }),
    );
    await sleep(TTL_MS * 2);
    const now = Date.now();
    for (const wake of wakes) {
      expect(await expiry(wake.wakeId)).toBeGreaterThan(now);
      expect(workingCalls.get(wake.wakeId)).toBeGreaterThanOrEqual(3);
    }
    expect(kept.some((k) => k.lost.aborted)).toBe(false);

    for (const k of kept) k.stop();
    const stoppedAt = Date.now();
    await sleep(TTL_MS * 2);
    for (const wake of wakes) expect(await expiry(wake.wakeId)).toBeLessThan(stoppedAt + TTL_MS + 100);
  });

  it("aborts lost for the wake that lost its lease, and only for it", async () => {
    const tenant = tenants[0] as SeededAgent;
    const [held, taken] = [await leasedWake(tenant), await leasedWake(tenant)];
    const [keepHeld, keepTaken] = [held, taken].map((wake) =>
      keepLease({ db: database.appDb, log, ...wake, ttlMs: TTL_MS, working: () => {} }),
    );
    // Another worker's lease now: the sweeper re-queued the wake and it was taken again.
    await database.db
      .updateTable("wakes")
      .set({ lease_epoch: taken.epoch + 1, worker_id: "other" })
      .where("id", "=", taken.wakeId)
      .execute();
    await sleep(TTL_MS);
    expect(keepTaken?.lost.aborted).toBe(true);
    expect(keepHeld?.lost.aborted).toBe(false);
    keepHeld?.stop();
    keepTaken?.stop();
  });
});
