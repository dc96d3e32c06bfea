import type { SessionState } from "@wakeloop/contracts";
import { wakeReason } from "@wakeloop/session-core";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append, appendAt, type NewEvent } from "./event-store";
import { acquireLease } from "./lease";
import { claimWakesToPublish } from "./wake-dispatch";
import { NOT_SCHEDULED, scheduledWake, scheduleWake, sessionAwaitingWake } from "./wakes";

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

describe("scheduledWake", () => {
  const asked = { id: "wake_a", tenant_id: "tnt_a", session_id: "sesn_a", reason: "user_message" as const };

  it("reads the jobs wl_open_wake claimed through their schema", () => {
    const job = { ...asked, attempt: 1 };
    expect(
      scheduledWake(
        [
          { opened: true, wake: null },
          { opened: false, wake: job },
        ],
        asked,
      ),
    ).toEqual({
      opened: job,
      claimed: [job],
      held: false,
    });
  });

  it("refuses a claimed job whose JSON does not match (invariant 8)", () => {
    const rows = [{ opened: false, wake: { ...asked, attempt: 0 } }];
    expect(() => scheduledWake(rows, asked)).toThrow(
      expect.objectContaining({ code: "stored_json_invalid" }),
    );
  });
});

describe("appendAt opening a wake", () => {
  const hi: NewEvent = { type: "user.message", content: [{ type: "text", text: "hi" }] };

  async function fresh(seeded: SeededAgent) {
    const session = await seedSession(testDb.db, seeded);
    const at = {
      tenantId: seeded.tenantId,
      sessionId: session.id,
      head: { lastSeq: session.last_seq, state: session.state },
    };
    return { ...at, openWake: { reasonFor: wakeReason, maxInFlight: 10 } };
  }

  /** The wakes of a session: none is opened but with the events that needed it. */
  async function wakesOf(sessionId: string) {
    const { rows } = await sql<{ id: string; reason: string; published: boolean; xid: string }>`
      SELECT id, reason, published_at IS NOT NULL AS published, xmin::text AS xid
      FROM wakes WHERE session_id = ${sessionId}`.execute(testDb.db);
    return rows;
  }

  it("opens and claims the wake in the commit of the events that need it", async () => {
    const seeded = await seedAgent(testDb.db);
    const input = await fresh(seeded);
    const { events, wake } = await appendAt(testDb.db, { ...input, events: [hi] });
    expect(wake).toMatchObject({ opened: { reason: "user_message", attempt: 1 }, held: false });
    expect(wake.claimed.map((job) => job.id)).toEqual([wake.opened?.id]);
    const [row, ...others] = await wakesOf(input.sessionId);
    expect(others).toEqual([]);
    expect(row).toMatchObject({ id: wake.opened?.id, reason: "user_message", published: true });
    const { rows } = await sql<{ xid: string }>`
      SELECT xmin::text AS xid FROM session_events WHERE id = ${events[0]?.id ?? ""}`.execute(testDb.db);
    expect(rows.map(({ xid }) => xid)).toEqual([row?.xid]);
    expect(await sessionAwaitingWake(testDb.db, seeded.tenantId, input.sessionId)).toBeNull();
  });

  it("opens none when the appended state needs none, or the session has one open", async () => {
    const seeded = await seedAgent(testDb.db);
    const input = await fresh(seeded);
    const idle: NewEvent = { type: "session.status_idle", stop_reason: { type: "end_turn" } };
    const quiet = await appendAt(testDb.db, { ...input, events: [idle] });
    expect(quiet.wake).toEqual(NOT_SCHEDULED);
    expect(await wakesOf(input.sessionId)).toEqual([]);

    const first = await appendAt(testDb.db, { ...input, head: quiet.head, events: [hi] });
    const second = await appendAt(testDb.db, { ...input, head: first.head, events: [hi] });
    expect(second.wake).toEqual(NOT_SCHEDULED);
    expect((await wakesOf(input.sessionId)).map((row) => row.id)).toEqual([first.wake.opened?.id]);
  });

  it("opens none when the append is refused", async () => {
    const seeded = await seedAgent(testDb.db);
    const input = await fresh(seeded);
    await expect(appendAt(testDb.db, { ...input, events: [hi], fence: 7 })).rejects.toMatchObject({
      code: "stale_fence",
    });
    await append(testDb.db, { tenantId: input.tenantId, sessionId: input.sessionId, events: [hi] });
    await expect(
      appendAt(testDb.db, { ...input, events: [hi], onMovedHead: "refuse" }),
    ).rejects.toMatchObject({ code: "session_head_moved" });
    expect(await wakesOf(input.sessionId)).toEqual([]);
  });

  it("holds the wake it opens while its tenant is at its limit", async () => {
    const seeded = await seedAgent(testDb.db);
    const running = await schedule(seeded, 1);
    const input = await fresh(seeded);
    const { wake } = await appendAt(testDb.db, {
      ...input,
      events: [hi],
      openWake: { reasonFor: wakeReason, maxInFlight: 1 },
    });
    expect(wake).toMatchObject({ opened: { reason: "user_message" }, claimed: [], held: true });
    expect(await wakesOf(input.sessionId)).toMatchObject([{ id: wake.opened?.id, published: false }]);
    // Its tenant's next wake to end makes room for it.
    await runAndFinish(seeded, running.opened);
    const released = await claimWakesToPublish(testDb.db, { tenantId: seeded.tenantId, maxInFlight: 1 });
    expect(released.map((job) => job.id)).toEqual([wake.opened?.id]);
  });

  it("computes the reason again from the state folded on a head that moved", async () => {
    const seeded = await seedAgent(testDb.db);
    const input = await fresh(seeded);
    // A wake started after the caller read the session: the message is folded into a running session.
    await append(testDb.db, {
      tenantId: input.tenantId,
      sessionId: input.sessionId,
      events: [{ type: "session.status_running" }],
    });
    const seen: SessionState[] = [];
    const reasonFor = (state: SessionState) => {
      seen.push(state);
      return wakeReason(state);
    };
    const { events, wake } = await appendAt(testDb.db, {
      ...input,
      events: [hi],
      openWake: { reasonFor, maxInFlight: 10 },
    });
    expect(events.map((event) => event.seq)).toEqual([2]);
    expect(seen.map((state) => [state.last_seq, state.status])).toEqual([
      [1, "idle"],
      [2, "running"],
    ]);
    expect(wake).toEqual(NOT_SCHEDULED);
    expect(await wakesOf(input.sessionId)).toEqual([]);
  });
});
