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
import { claimWakesToPublish } from "./wake-dispatch";
import { scheduleWake, sessionAwaitingWake } from "./wakes";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 10 });
});
afterAll(() => testDb.drop());

/** A wake that ends as a worker ends it: the lease taken, then idle committed with the wake's finish. */
async function runAndFinish(seeded: SeededAgent, wake: { id: string; session_id: string }): Promise<void> {
  const { tenantId } = seeded;
  const lease = await acquireLease(testDb.db, {
    tenantId,
    sessionId: wake.session_id,
    wakeId: wake.id,
    workerId: "w",
    ttlMs: 30_000,
  });
  if (lease === null) throw new Error("the wake's lease was taken");
  await append(testDb.db, {
    tenantId,
    sessionId: wake.session_id,
    events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
    fence: lease.epoch,
    finishWake: { wakeId: wake.id, epoch: lease.epoch, status: "completed" },
  });
}

async function schedule(seeded: SeededAgent, maxInFlight: number) {
  const session = await seedSession(testDb.db, seeded);
  const scheduled = await scheduleWake(testDb.db, {
    tenantId: seeded.tenantId,
    sessionId: session.id,
    reason: "user_message",
    maxInFlight,
  });
  if (scheduled.opened === null) throw new Error("a new session has no open wake");
  return { ...scheduled, opened: scheduled.opened };
}

describe("sessionAwaitingWake", () => {
  it("reads the session only while no wake is open for it", async () => {
    const seeded = await seedAgent(testDb.db);
    const { tenantId } = seeded;
    const session = await seedSession(testDb.db, seeded);
    expect((await sessionAwaitingWake(testDb.db, tenantId, session.id))?.id).toBe(session.id);

    const { opened } = await scheduleWake(testDb.db, {
      tenantId,
      sessionId: session.id,
      reason: "user_message",
      maxInFlight: 10,
    });
    if (opened === null) throw new Error("a new session has no open wake");
    expect(await sessionAwaitingWake(testDb.db, tenantId, session.id)).toBeNull();
    await runAndFinish(seeded, opened);
    expect((await sessionAwaitingWake(testDb.db, tenantId, session.id))?.state.status).toBe("idle");
  });

  it("reads nothing of a session unknown to the tenant", async () => {
    const owner = await seedAgent(testDb.db);
    const other = await seedAgent(testDb.db);
    const session = await seedSession(testDb.db, owner);
    expect(await sessionAwaitingWake(testDb.db, other.tenantId, session.id)).toBeNull();
    expect(await sessionAwaitingWake(testDb.db, owner.tenantId, "sess_missing")).toBeNull();
  });
});

describe("scheduleWake", () => {
  it("says when the wake it opened is held, and a repeat opens nothing", async () => {
    const seeded = await seedAgent(testDb.db);
    const first = await schedule(seeded, 1);
    expect(first.claimed.map((job) => job.id)).toEqual([first.opened.id]);
    expect(first.held).toBe(false);
    const second = await schedule(seeded, 1);
    expect(second).toMatchObject({ claimed: [], held: true });
    const repeat = await scheduleWake(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId: second.opened.session_id,
      reason: "user_message",
      maxInFlight: 1,
    });
    expect(repeat).toEqual({ opened: null, claimed: [], held: false });
  });

  it("strands no held wake when a wake ends while its opener has not committed", async () => {
    // Two tenants at their limit of one: each has a running wake, and each opens another in a
    // transaction that has not committed when the running wake ends and its finisher claims.
    const tenants = [await seedAgent(testDb.db), await seedAgent(testDb.db)];
    const runningWakes = [];
    for (const seeded of tenants) runningWakes.push((await schedule(seeded, 1)).opened);
    const [tenant, other] = tenants;
    const [running, otherRunning] = runningWakes;
    if (!tenant || !other || !running || !otherRunning) throw new Error("two tenants were seeded");
    const session = await seedSession(testDb.db, tenant);

    const held = await testDb.db.transaction().execute(async (trx) => {
      const opened = await scheduleWake(trx, {
        tenantId: tenant.tenantId,
        sessionId: session.id,
        reason: "user_message",
        maxInFlight: 1,
      });
      expect(opened).toMatchObject({ claimed: [], held: true });
      // The wake ends; its finisher cannot see the uncommitted held wake, and returns at once rather
      // than waiting for the opener's lock (this transaction holds it).
      await runAndFinish(tenant, running);
      expect(await claimWakesToPublish(testDb.db, { tenantId: tenant.tenantId, maxInFlight: 1 })).toEqual([]);
      // The other tenant's room is its own: its held wake waits for its own running wake, not ours.
      const otherHeld = await schedule(other, 1);
      expect(otherHeld).toMatchObject({ claimed: [], held: true });
      return opened.opened;
    });
    if (held === null) throw new Error("the session had no open wake");

    // The opener, committed, claims again: the room the ended wake left is used.
    const again = await claimWakesToPublish(testDb.db, { tenantId: tenant.tenantId, maxInFlight: 1 });
    expect(again.map((wake) => wake.id)).toEqual([held.id]);
    expect(await claimWakesToPublish(testDb.db, { tenantId: other.tenantId, maxInFlight: 1 })).toEqual([]);

    // A wake held while its tenant is full is claimed by the finisher of the wake that ends next.
    await runAndFinish(other, otherRunning);
    const released = await claimWakesToPublish(testDb.db, { tenantId: other.tenantId, maxInFlight: 1 });
    expect(released).toHaveLength(1);
    expect(released[0]?.session_id).not.toBe(otherRunning.session_id);
  });

  it("commits its wake without waiting while another claim holds the tenant's lock", async () => {
    const seeded = await seedAgent(testDb.db);
    const [first, second] = [await seedSession(testDb.db, seeded), await seedSession(testDb.db, seeded)];
    if (!first || !second) throw new Error("two sessions were seeded");
    const input = { tenantId: seeded.tenantId, reason: "user_message", maxInFlight: 10 } as const;
    const waiting = await testDb.db.transaction().execute(async (trx) => {
      // This opener took the lock and has not committed: the second opener does not wait for it.
      expect((await scheduleWake(trx, { ...input, sessionId: first.id })).held).toBe(false);
      const opened = await scheduleWake(testDb.db, { ...input, sessionId: second.id });
      expect(opened).toMatchObject({ claimed: [], held: true });
      expect(await sessionAwaitingWake(testDb.db, seeded.tenantId, second.id)).toBeNull();
      return opened.opened;
    });
    const again = await claimWakesToPublish(testDb.db, { tenantId: seeded.tenantId, maxInFlight: 10 });
    expect(again.map((wake) => wake.id)).toEqual([waiting?.id]);
  });

  it("claims nothing for a tenant that holds no wake, even with room", async () => {
    const seeded = await seedAgent(testDb.db);
    const { opened } = await schedule(seeded, 5);
    await runAndFinish(seeded, opened);
    expect(await claimWakesToPublish(testDb.db, { tenantId: seeded.tenantId, maxInFlight: 5 })).toEqual([]);
  });
});
