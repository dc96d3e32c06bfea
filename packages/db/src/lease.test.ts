import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedWake,
  type TestDatabase,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentCode, deleteAgentCode } from "./agent-code";
import { append } from "./event-store";
import { newId } from "./ids";
import { acquireLease, renewLeases, startWake } from "./lease";
import { isUniqueViolation } from "./pg-errors";
import { getSession, readEvents } from "./session-queries";
import { expiredLeases, requeueWake } from "./wake-recovery";
import { openWake } from "./wakes";

let testDb: TestDatabase;
let seeded: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 10 });
  seeded = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

const sessionWithWake = () => seedWake(testDb.db, seeded);

/** Renews one lease the way the worker's batch does; true when it was renewed. */
async function renewLease(wakeId: string, epoch: number, ttlMs: number): Promise<boolean> {
  return (await renewLeases(testDb.db, seeded.tenantId, [{ wakeId, epoch }], ttlMs)).has(wakeId);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function wake(wakeId: string) {
  return testDb.db.selectFrom("wakes").selectAll().where("id", "=", wakeId).executeTakeFirstOrThrow();
}

describe("leases", () => {
  it("acquire bumps the session epoch once; a second acquire of the same wake gets nothing", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const lease = { tenantId: seeded.tenantId, sessionId, wakeId, ttlMs: 30_000 };
    const [a, b] = await Promise.all([
      acquireLease(testDb.db, { ...lease, workerId: "worker-a" }),
      acquireLease(testDb.db, { ...lease, workerId: "worker-b" }),
    ]);
    expect([a, b].filter((won) => won !== null)).toMatchObject([{ epoch: 1, session: { lease_epoch: 1 } }]);
    expect(await acquireLease(testDb.db, { ...lease, workerId: "worker-c" })).toBeNull();
    expect((await getSession(testDb.db, seeded.tenantId, sessionId))?.lease_epoch).toBe(1);
    expect(await wake(wakeId)).toMatchObject({
      status: "running",
      lease_epoch: 1,
      worker_id: a ? "worker-a" : "worker-b",
    });

    const appended = await append(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      events: [{ type: "session.status_running" }],
      fence: 1,
    });
    expect(appended).toHaveLength(1);
  });

  it("returns the session, its pinned agent spec and its environment spec as fresh reads give them", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const lease = { tenantId: seeded.tenantId, sessionId, wakeId, ttlMs: 30_000 };
    const won = await acquireLease(testDb.db, { ...lease, workerId: "worker-a" });
    expect(JSON.stringify(won?.session)).toBe(
      JSON.stringify(await getSession(testDb.db, seeded.tenantId, sessionId)),
    );
    const version = await testDb.db
      .selectFrom("agent_versions")
      .select("spec")
      .where("agent_id", "=", seeded.agentId)
      .where("version", "=", seeded.agentVersion)
      .executeTakeFirstOrThrow();
    expect(won?.agentSpec).toEqual(version.spec);
    expect(won?.environmentSpec).toBeNull();
    expect(await acquireLease(testDb.db, { ...lease, workerId: "worker-b" })).toBeNull();
  });

  it("starts a wake with its lease, the history page after what the caller holds and the agent-tools flag", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const { tenantId, agentId } = seeded;
    const say = (text: string) => ({
      type: "user.message" as const,
      content: [{ type: "text" as const, text }],
    });
    await append(testDb.appDb, { tenantId, sessionId, events: [say("a"), say("b")] });
    await append(testDb.appDb, {
      tenantId,
      sessionId,
      events: [{ type: "span.model_request_start", model: "m" }, say("c"), say("d")],
    });
    const start = { tenantId, sessionId, wakeId, workerId: "worker-a", ttlMs: 30_000 };
    const other = await seedAgent(testDb.db);
    expect(
      await startWake(testDb.appDb, { ...start, tenantId: other.tenantId, knownSeq: 0, pageSize: 10 }),
    ).toBeNull();

    const started = await startWake(testDb.appDb, { ...start, knownSeq: 1, pageSize: 3 });
    expect(started).toMatchObject({ epoch: 1, hasAgentTools: false, session: { last_seq: 5 } });
    // The page reads back byte for byte as a read of the same events does, processed_at included.
    const read = await readEvents(testDb.appDb, { tenantId, sessionId, afterSeq: 1, limit: 3 });
    expect(read.map((event) => event.seq)).toEqual([2, 3, 4]);
    expect(read[0]?.processed_at).not.toBeNull();
    expect(JSON.stringify(started?.events)).toBe(JSON.stringify(read));
    expect(JSON.stringify(started?.session)).toBe(
      JSON.stringify(await getSession(testDb.appDb, tenantId, sessionId)),
    );
    expect(await startWake(testDb.appDb, { ...start, knownSeq: 0, pageSize: 10 })).toBeNull();

    // Nothing after the session's last seq, nothing when the caller holds it all; tools once saved.
    const scope = { tenantId, agentId };
    const tool = { description: "d", code: "return 1;", schema: { type: "object" }, requires: [] };
    const author = { sessionId, toolCallId: newId("event") };
    await createAgentCode(testDb.appDb, scope, "tool", "one", tool, author, { maxItems: 3 });
    await testDb.db.updateTable("wakes").set({ status: "completed" }).where("id", "=", wakeId).execute();
    const again = await openWake(testDb.appDb, { tenantId, sessionId, reason: "user_message" });
    if (again === null) throw new Error("no wake");
    const held = await startWake(testDb.appDb, { ...start, wakeId: again.id, knownSeq: 5, pageSize: 10 });
    expect(held).toMatchObject({ epoch: 2, hasAgentTools: true, events: [] });
    await deleteAgentCode(testDb.appDb, scope, "tool", "one");
  });

  it("takes the lease and appends while another transaction's foreign-key check holds the session row", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const tenantId = seeded.tenantId;
    // What an insert referencing the session takes for its foreign key (the event indexer's, the span
    // exporter's), held until that transaction ends.
    const keyShare = sql`SELECT 1 FROM sessions WHERE id = ${sessionId} FOR KEY SHARE`;
    const within = <T>(work: Promise<T>) =>
      Promise.race([work, sleep(2_000).then(() => "blocked on the session row" as const)]);
    await testDb.db.transaction().execute(async (trx) => {
      await keyShare.execute(trx);
      const lease = await within(
        acquireLease(testDb.db, { tenantId, sessionId, wakeId, workerId: "worker-a", ttlMs: 30_000 }),
      );
      expect(lease).toMatchObject({ epoch: 1 });
      const appended = await within(
        append(testDb.db, { tenantId, sessionId, events: [{ type: "session.status_running" }], fence: 1 }),
      );
      expect(appended).toHaveLength(1);
    });
  });

  it("refuses to take a wake of another tenant's session", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const other = await seedAgent(testDb.db);
    const lease = { sessionId, wakeId, workerId: "worker-a", ttlMs: 30_000 };
    expect(await acquireLease(testDb.db, { ...lease, tenantId: other.tenantId })).toBeNull();
    expect(await wake(wakeId)).toMatchObject({ status: "queued", lease_epoch: null });
  });

  it("re-queue of an expired lease fences out the stalled worker", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const tenantId = seeded.tenantId;
    const held = await acquireLease(testDb.db, {
      tenantId,
      sessionId,
      wakeId,
      workerId: "stalled",
      ttlMs: 1,
    });
    expect(held).toMatchObject({ epoch: 1 });
    await sleep(20);

    const expired = await expiredLeases(testDb.db, new Date(Date.now() + 1_000));
    expect(expired.map((row) => row.id)).toContain(wakeId);
    const requeued = await testDb.db.transaction().execute(async (trx) => {
      const row = await requeueWake(trx, { tenantId, wakeId, expectedEpoch: 1 });
      await append(trx, { tenantId, sessionId, events: [{ type: "session.status_rescheduled" }] });
      return row;
    });
    expect(requeued).toMatchObject({ status: "queued", attempt: 2, worker_id: null, lease_epoch: null });
    expect(await getSession(testDb.db, tenantId, sessionId)).toMatchObject({
      lease_epoch: 2,
      status: "rescheduling",
      last_seq: 1,
    });

    await expect(
      append(testDb.db, { tenantId, sessionId, events: [{ type: "agent.thinking" }], fence: 1 }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    expect(await renewLease(wakeId, 1, 30_000)).toBe(false);
    const idle = [{ type: "session.status_idle" as const, stop_reason: { type: "end_turn" as const } }];
    await expect(
      append(testDb.db, {
        tenantId,
        sessionId,
        events: idle,
        fence: 1,
        finishWake: { wakeId, epoch: 1, status: "completed" },
      }),
    ).rejects.toMatchObject({ code: "stale_fence" });
    expect(await wake(wakeId)).toMatchObject({ status: "queued" });

    const next = await acquireLease(testDb.db, {
      tenantId,
      sessionId,
      wakeId,
      workerId: "fresh",
      ttlMs: 30_000,
    });
    expect(next).toMatchObject({ epoch: 3 });
    await append(testDb.db, {
      tenantId,
      sessionId,
      events: idle,
      fence: 3,
      finishWake: { wakeId, epoch: 3, status: "completed" },
    });
    expect(await wake(wakeId)).toMatchObject({ status: "completed", attempt: 2, lease_expires_at: null });
  });

  it("does not re-queue a lease that is live or was renewed", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const tenantId = seeded.tenantId;
    await acquireLease(testDb.db, { tenantId, sessionId, wakeId, workerId: "w", ttlMs: 60_000 });
    const requeued = await testDb.db
      .transaction()
      .execute((trx) => requeueWake(trx, { tenantId, wakeId, expectedEpoch: 1 }));
    expect(requeued).toBeNull();
    expect(await renewLease(wakeId, 1, 60_000)).toBe(true);
    expect((await getSession(testDb.db, tenantId, sessionId))?.lease_epoch).toBe(1);
  });

  it("a racing renewal and re-queue of an expired lease never both win", async () => {
    const tenantId = seeded.tenantId;
    for (let round = 0; round < 15; round++) {
      const { sessionId, wakeId } = await sessionWithWake();
      await acquireLease(testDb.db, { tenantId, sessionId, wakeId, workerId: "w", ttlMs: 1 });
      await sleep(5);
      const [renewed, requeued] = await Promise.all([
        renewLease(wakeId, 1, 60_000),
        testDb.db.transaction().execute((trx) => requeueWake(trx, { tenantId, wakeId, expectedEpoch: 1 })),
      ]);
      expect(renewed !== (requeued !== null)).toBe(true);
      const row = await wake(wakeId);
      const epoch = (await getSession(testDb.db, tenantId, sessionId))?.lease_epoch;
      expect(row.status).toBe(renewed ? "running" : "queued");
      expect(epoch).toBe(renewed ? 1 : 2);
    }
  });
});

describe("renewing a batch of leases", () => {
  it("renews the held ones in one go and leaves out the lost, the finished and other epochs", async () => {
    const tenantId = seeded.tenantId;
    const taken = [];
    for (let n = 0; n < 4; n++) {
      const { sessionId, wakeId } = await sessionWithWake();
      await acquireLease(testDb.db, { tenantId, sessionId, wakeId, workerId: "w", ttlMs: 1_000 });
      taken.push(wakeId);
    }
    const [held, finished, stale, requeued] = taken as [string, string, string, string];
    const finishedSession = await testDb.db
      .selectFrom("wakes")
      .select("session_id")
      .where("id", "=", finished)
      .executeTakeFirstOrThrow();
    await append(testDb.db, {
      tenantId,
      sessionId: finishedSession.session_id,
      events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
      fence: 1,
      finishWake: { wakeId: finished, epoch: 1, status: "completed" },
    });
    await sleep(1_100);
    await testDb.db
      .transaction()
      .execute((trx) => requeueWake(trx, { tenantId, wakeId: requeued, expectedEpoch: 1 }));

    const renewed = await renewLeases(
      testDb.db,
      tenantId,
      [held, finished, requeued].map((wakeId) => ({ wakeId, epoch: 1 })).concat({ wakeId: stale, epoch: 7 }),
      60_000,
    );
    expect([...renewed]).toEqual([held]);
    const expiry = (await wake(held)).lease_expires_at?.getTime() ?? 0;
    expect(expiry).toBeGreaterThan(Date.now() + 50_000);
    // The stale epoch renewed nothing: that lease expired as it was.
    expect((await wake(stale)).lease_expires_at?.getTime() ?? 0).toBeLessThan(Date.now());
  });

  it("sees only its tenant's wakes", async () => {
    const other = await seedAgent(testDb.db);
    const { sessionId, wakeId } = await sessionWithWake();
    await acquireLease(testDb.db, {
      tenantId: seeded.tenantId,
      sessionId,
      wakeId,
      workerId: "w",
      ttlMs: 30_000,
    });
    expect(await renewLeases(testDb.db, other.tenantId, [{ wakeId, epoch: 1 }], 60_000)).toEqual(new Set());
    expect(await renewLease(wakeId, 1, 60_000)).toBe(true);
  });
});

describe("open wakes", () => {
  it("allows at most one open wake per session", async () => {
    const { sessionId, wakeId } = await sessionWithWake();
    const tenantId = seeded.tenantId;
    expect(await openWake(testDb.db, { tenantId, sessionId, reason: "reminder" })).toBeNull();

    const insertSecond = testDb.db
      .insertInto("wakes")
      .values({
        id: newId("wake"),
        tenant_id: tenantId,
        session_id: sessionId,
        status: "queued",
        reason: "reminder",
        attempt: 1,
        due_at: new Date(),
      })
      .execute();
    const error = await insertSecond.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(isUniqueViolation(error, "wakes_one_open_per_session")).toBe(true);

    const { epoch } =
      (await acquireLease(testDb.db, { tenantId, sessionId, wakeId, workerId: "w", ttlMs: 30_000 })) ?? {};
    expect(await openWake(testDb.db, { tenantId, sessionId, reason: "reminder" })).toBeNull();
    await append(testDb.db, {
      tenantId,
      sessionId,
      events: [{ type: "session.status_idle", stop_reason: { type: "end_turn" } }],
      fence: epoch ?? -1,
      finishWake: { wakeId, epoch: epoch ?? -1, status: "completed" },
    });
    const reopened = await openWake(testDb.db, { tenantId, sessionId, reason: "reminder" });
    expect(reopened).toMatchObject({ session_id: sessionId, reason: "reminder", attempt: 1 });
    expect(await wake(reopened?.id ?? "")).toMatchObject({ status: "queued", published_at: null });
  });
});
