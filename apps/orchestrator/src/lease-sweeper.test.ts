import type { Bus } from "@wakeloop/bus";
import { closeTestBus, openTestBus } from "@wakeloop/bus/testing";
import { WakeJob } from "@wakeloop/contracts";
import { acquireLease, append, claimWakesToPublish, readEvents, renewLeases } from "@wakeloop/db";
import { createLogger } from "@wakeloop/telemetry";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedWake,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type SweeperOptions, sweepOnce } from "./lease-sweeper";

// Against real Postgres and NATS, each test with its own database and subject prefix, so a sweep sees
// only that test's wakes and the wake stream holds only the jobs it published. The sweeper acts
// through the app role that row-level security binds, as in production.

let database: TestDatabase;
let bus: Bus;
let seeded: SeededAgent;
const log = createLogger({ service: "lease-sweeper-test", level: "silent" });
const options: SweeperOptions = { maxAttempts: 2, republishQueuedAfterMs: 60_000, maxWakesInFlight: 10 };

beforeEach(async () => {
  database = await createTestDatabase();
  bus = await openTestBus();
  seeded = await seedAgent(database.db);
});

afterEach(async () => {
  await closeTestBus(bus);
  await database.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sweep = (now = new Date()) => sweepOnce({ db: database.appDb, bus, log }, options, now);

/** The jobs on the wake work queue, oldest first, with the msg id each was published under. */
async function jobs(): Promise<Array<WakeJob & { msgId: string | undefined }>> {
  const name = bus.catalog.wakes.stream.name;
  const { first_seq, last_seq, messages } = (await bus.jsm.streams.info(name)).state;
  const found = [];
  for (let seq = first_seq; messages > 0 && seq <= last_seq; seq++) {
    const stored = await bus.jsm.streams.getMessage(name, { seq });
    if (stored) found.push({ ...WakeJob.parse(stored.json()), msgId: stored.header.get("Nats-Msg-Id") });
  }
  return found;
}

/** A published wake of a new session. */
async function queuedWake(): Promise<{ sessionId: string; wakeId: string }> {
  const target = await seedWake(database.db, seeded);
  await claimWakesToPublish(database.db, { tenantId: seeded.tenantId, maxInFlight: 10 });
  return target;
}

/** A worker takes the wake under a lease of `ttlMs` and stalls; a lease of 1 ms has expired on return. */
async function stall(target: { sessionId: string; wakeId: string }, ttlMs = 1): Promise<number> {
  const lease = await acquireLease(database.db, {
    tenantId: seeded.tenantId,
    ...target,
    workerId: "stalled",
    ttlMs,
  });
  if (lease === null) throw new Error("the wake could not be taken");
  await append(database.db, {
    tenantId: seeded.tenantId,
    sessionId: target.sessionId,
    events: [{ type: "session.status_running" }],
    fence: lease.epoch,
  });
  if (ttlMs === 1) await sleep(10);
  return lease.epoch;
}

const wakeRow = (wakeId: string) =>
  database.db.selectFrom("wakes").selectAll().where("id", "=", wakeId).executeTakeFirstOrThrow();

async function eventTypes(sessionId: string): Promise<string[]> {
  const events = await readEvents(database.db, { tenantId: seeded.tenantId, sessionId });
  return events.map((event) => event.type);
}

describe("sweepOnce", () => {
  it("re-queues an expired lease with session.status_rescheduled and publishes its job again", async () => {
    const target = await queuedWake();
    await stall(target);

    expect(await sweep()).toEqual({ requeued: 1, exhausted: 0, republished: 0, dispatched: 0 });
    expect(await wakeRow(target.wakeId)).toMatchObject({ status: "queued", attempt: 2, worker_id: null });
    expect(await eventTypes(target.sessionId)).toEqual([
      "session.status_running",
      "session.status_rescheduled",
    ]);
    expect(await jobs()).toEqual([
      {
        wake_id: target.wakeId,
        tenant_id: seeded.tenantId,
        session_id: target.sessionId,
        attempt: 2,
        reason: "user_message",
        msgId: `${target.wakeId}:2`,
      },
    ]);
    // The next sweep finds nothing left to recover.
    expect(await sweep()).toEqual({ requeued: 0, exhausted: 0, republished: 0, dispatched: 0 });
  });

  it("gives up after the last attempt: the wake fails and the session ends its turn", async () => {
    const target = await queuedWake();
    await stall(target);
    expect((await sweep()).requeued).toBe(1);
    await stall(target);

    expect(await sweep()).toEqual({ requeued: 0, exhausted: 1, republished: 0, dispatched: 0 });
    expect(await wakeRow(target.wakeId)).toMatchObject({ status: "failed", attempt: 2 });
    const events = await readEvents(database.db, { tenantId: seeded.tenantId, sessionId: target.sessionId });
    expect(events.slice(-2)).toMatchObject([
      { type: "session.error", error: { type: "lease_lost", retry_status: { type: "exhausted" } } },
      { type: "session.status_idle", stop_reason: { type: "retries_exhausted" } },
    ]);
    // Only the first re-queue published a job; giving up publishes none.
    expect((await jobs()).map((job) => job.msgId)).toEqual([`${target.wakeId}:2`]);
  });

  it("leaves alone a lease that was renewed after it expired, and one that is live", async () => {
    const renewed = await queuedWake();
    const epoch = await stall(renewed);
    await renewLeases(database.db, seeded.tenantId, [{ wakeId: renewed.wakeId, epoch }], 60_000);
    const live = await queuedWake();
    await stall(live, 60_000);

    expect(await sweep()).toEqual({ requeued: 0, exhausted: 0, republished: 0, dispatched: 0 });
    for (const target of [renewed, live]) {
      expect(await wakeRow(target.wakeId)).toMatchObject({
        status: "running",
        attempt: 1,
        worker_id: "stalled",
      });
      expect(await eventTypes(target.sessionId)).toEqual(["session.status_running"]);
    }
    expect(await jobs()).toEqual([]);
  });

  it("republishes published wakes left queued too long under their first msg id, not held ones", async () => {
    const lost = await queuedWake();
    const later = new Date(Date.now() + options.republishQueuedAfterMs + 1_000);

    expect(await sweep(later)).toMatchObject({ republished: 1 });
    expect(await jobs()).toMatchObject([{ wake_id: lost.wakeId, attempt: 1, msgId: `${lost.wakeId}:1` }]);
    // JetStream drops the same msg id again, so a job still queued is never doubled.
    expect(await sweep(later)).toMatchObject({ republished: 1 });
    expect(await jobs()).toHaveLength(1);
    // A wake that was never published is the dispatch's, which the tenant's limit governs.
    await seedWake(database.db, seeded);
    const full = await sweepOnce(
      { db: database.appDb, bus, log },
      { ...options, maxWakesInFlight: 1 },
      later,
    );
    expect(full).toEqual({ requeued: 0, exhausted: 0, republished: 1, dispatched: 0 });
    expect((await jobs()).map((job) => job.session_id)).toEqual([lost.sessionId]);
  });
});
