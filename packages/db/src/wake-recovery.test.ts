import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedWake,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append } from "./event-store";
import { acquireLease, renewLeases } from "./lease";
import { getSession, readEvents } from "./session-queries";
import { type ExpiredLease, exhaustExpiredWake, expiredLeases, rescheduleExpiredWake } from "./wake-recovery";
import { openWake } from "./wakes";

// Recovery runs as the sweeper does in production: through the app role that row-level security
// binds. Assertions read through the owner.

let testDb: TestDatabase;
let seeded: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 10 });
  seeded = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A session whose wake a worker took with a lease of `ttlMs`, past its expiry when `ttlMs` is tiny. */
async function heldWake(ttlMs: number): Promise<{ sessionId: string; wakeId: string }> {
  const target = await seedWake(testDb.db, seeded);
  const lease = await acquireLease(testDb.db, {
    tenantId: seeded.tenantId,
    ...target,
    workerId: "stalled",
    ttlMs,
  });
  expect(lease?.epoch).toBe(1);
  await append(testDb.db, {
    tenantId: seeded.tenantId,
    sessionId: target.sessionId,
    events: [{ type: "session.status_running" }],
    fence: 1,
  });
  await sleep(ttlMs + 10);
  return target;
}

async function expiredLease(wakeId: string): Promise<ExpiredLease> {
  const expired = await expiredLeases(testDb.appDb, new Date(Date.now() + 1_000));
  const lease = expired.find((row) => row.id === wakeId);
  if (lease === undefined) throw new Error(`wake ${wakeId} is not among the expired leases`);
  return lease;
}

function wake(wakeId: string) {
  return testDb.db.selectFrom("wakes").selectAll().where("id", "=", wakeId).executeTakeFirstOrThrow();
}

async function eventTypes(sessionId: string): Promise<string[]> {
  const events = await readEvents(testDb.db, { tenantId: seeded.tenantId, sessionId });
  return events.map((event) => event.type);
}

describe("wake recovery", () => {
  it("reschedules an expired wake once, fencing out its stalled worker", async () => {
    const { sessionId, wakeId } = await heldWake(1);
    const expired = await expiredLease(wakeId);
    expect(expired).toMatchObject({ tenant_id: seeded.tenantId, session_id: sessionId, lease_epoch: 1 });

    const [first, second] = await Promise.all([
      rescheduleExpiredWake(testDb.appDb, expired),
      rescheduleExpiredWake(testDb.appDb, expired),
    ]);
    expect([first, second].filter((won) => won !== null)).toMatchObject([
      { id: wakeId, status: "queued", attempt: 2, worker_id: null, lease_epoch: null },
    ]);
    expect(await eventTypes(sessionId)).toEqual(["session.status_running", "session.status_rescheduled"]);
    const events = await readEvents(testDb.db, { tenantId: seeded.tenantId, sessionId, afterSeq: 1 });
    expect(events[0]?.wake_id).toBe(wakeId);
    expect(await getSession(testDb.db, seeded.tenantId, sessionId)).toMatchObject({
      lease_epoch: 2,
      status: "rescheduling",
    });
    await expect(
      append(testDb.db, {
        tenantId: seeded.tenantId,
        sessionId,
        events: [{ type: "agent.thinking" }],
        fence: 1,
      }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    // The queued wake is due again: a worker can take it under a newer epoch.
    const next = await acquireLease(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      wakeId,
      workerId: "fresh",
      ttlMs: 30_000,
    });
    expect(next?.epoch).toBe(3);
  });

  it("fails an exhausted wake with lease_lost and ends the turn, leaving room for a new wake", async () => {
    const { sessionId, wakeId } = await heldWake(1);
    const expired = await expiredLease(wakeId);

    const failed = await exhaustExpiredWake(testDb.appDb, expired);
    expect(failed).toMatchObject({ id: wakeId, status: "failed", lease_expires_at: null });
    expect(failed?.finished_at).toBeInstanceOf(Date);
    expect(await exhaustExpiredWake(testDb.appDb, expired)).toBeNull();

    const events = await readEvents(testDb.db, { tenantId: seeded.tenantId, sessionId, afterSeq: 1 });
    expect(events).toMatchObject([
      {
        type: "session.error",
        wake_id: wakeId,
        error: {
          type: "lease_lost",
          message: "the wake lost its worker 1 times",
          retry_status: { type: "exhausted" },
        },
      },
      { type: "session.status_idle", wake_id: wakeId, stop_reason: { type: "retries_exhausted" } },
    ]);
    expect(await getSession(testDb.db, seeded.tenantId, sessionId)).toMatchObject({
      lease_epoch: 2,
      status: "idle",
    });
    const next = await openWake(testDb.db, { tenantId: seeded.tenantId, sessionId, reason: "user_message" });
    expect(next).toMatchObject({ session_id: sessionId, attempt: 1 });
    const row = await testDb.db
      .selectFrom("wakes")
      .select("status")
      .where("id", "=", next?.id ?? "")
      .executeTakeFirst();
    expect(row?.status).toBe("queued");
  });

  it("leaves alone a lease renewed after the sweeper saw it expire", async () => {
    const { sessionId, wakeId } = await heldWake(1);
    const expired = await expiredLease(wakeId);
    expect(await renewLeases(testDb.db, seeded.tenantId, [{ wakeId, epoch: 1 }], 60_000)).toEqual(
      new Set([wakeId]),
    );

    expect(await rescheduleExpiredWake(testDb.appDb, expired)).toBeNull();
    expect(await exhaustExpiredWake(testDb.appDb, expired)).toBeNull();
    expect(await wake(wakeId)).toMatchObject({ status: "running", attempt: 1, lease_epoch: 1 });
    expect((await getSession(testDb.db, seeded.tenantId, sessionId))?.lease_epoch).toBe(1);
    expect(await eventTypes(sessionId)).toEqual(["session.status_running"]);
  });

  it("does nothing for a lease that moved on to a newer epoch", async () => {
    const { sessionId, wakeId } = await heldWake(1);
    const expired = await expiredLease(wakeId);
    expect(await rescheduleExpiredWake(testDb.appDb, expired)).not.toBeNull();
    await acquireLease(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      wakeId,
      workerId: "next",
      ttlMs: 1,
    });
    await sleep(10);
    // The stale view (epoch 1) of a wake that expired again under epoch 3.
    expect(await exhaustExpiredWake(testDb.appDb, expired)).toBeNull();
    expect(await rescheduleExpiredWake(testDb.appDb, expired)).toBeNull();
    expect(await wake(wakeId)).toMatchObject({ status: "running", attempt: 2, lease_epoch: 3 });
  });
});
