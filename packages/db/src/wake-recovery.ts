import { type ExpressionBuilder, type Kysely, sql, type Transaction, type UpdateObject } from "kysely";
import type { Database, WakeRow } from "./database";
import { append } from "./event-store";
import { scopeTransaction, withTenant } from "./tenant-scope";

/*
 * Recovery of wakes whose worker stopped renewing its lease (DESIGN §3 step 7, invariant 3). The
 * sweeper decides (how many attempts a wake gets, what to log and publish); every write is here.
 * Both outcomes are one conditional update of the wake row under the epoch the sweeper saw expire,
 * so a renewal, a finish or another sweeper in between turns them into no-ops, and both bump the
 * session's epoch so the stalled worker is fenced out. Lock order: session row, then wake row.
 */

/** What the sweeper learns of an expired lease before it acts as the wake's tenant. */
export type ExpiredLease = Pick<WakeRow, "id" | "tenant_id" | "session_id" | "attempt"> & {
  lease_epoch: number;
};

/**
 * Running wakes whose lease expired before `now`, oldest first, across tenants (the sweeper's view):
 * one of the few tenant-blind reads, so it goes through a definer function that returns only ids.
 */
export async function expiredLeases(db: Kysely<Database>, now: Date, limit = 100): Promise<ExpiredLease[]> {
  const result = await sql<ExpiredLease>`SELECT * FROM wl_expired_leases(${now}, ${limit})`.execute(db);
  return result.rows;
}

export interface RequeueWakeInput {
  tenantId: string;
  wakeId: string;
  /** The epoch the sweeper saw expire; a renewal or a newer lease since then makes this a no-op. */
  expectedEpoch: number;
}

/**
 * Puts a wake whose lease expired back in the queue (attempt + 1) and bumps the session's epoch, in
 * the caller's transaction. Returns the re-queued wake, or null when the lease was renewed, finished
 * or already re-queued in the meantime. `rescheduleExpiredWake` is this plus its event.
 */
export async function requeueWake(
  trx: Transaction<Database>,
  input: RequeueWakeInput,
): Promise<WakeRow | null> {
  await scopeTransaction(trx, input.tenantId);
  const target = await trx
    .selectFrom("wakes")
    .select("session_id")
    .where("id", "=", input.wakeId)
    .where("tenant_id", "=", input.tenantId)
    .executeTakeFirst();
  if (target === undefined) return null;
  return fenceOut(trx, { ...input, sessionId: target.session_id }, (eb) => ({
    status: "queued",
    attempt: eb("attempt", "+", 1),
    worker_id: null,
    lease_epoch: null,
    lease_expires_at: null,
    due_at: sql<Date>`now()`,
  }));
}

/**
 * Re-queues an expired wake and appends `session.status_rescheduled` with it. The wake keeps its
 * `published_at`, so its job (msg id `<wake>:<attempt>`) is the caller's to publish again; null when
 * the lease moved on before this ran.
 */
export function rescheduleExpiredWake(db: Kysely<Database>, expired: ExpiredLease): Promise<WakeRow | null> {
  return withTenant(db, expired.tenant_id, async (trx) => {
    const wake = await requeueWake(trx, {
      tenantId: expired.tenant_id,
      wakeId: expired.id,
      expectedEpoch: expired.lease_epoch,
    });
    if (wake === null) return null;
    await append(trx, {
      tenantId: expired.tenant_id,
      sessionId: expired.session_id,
      events: [{ type: "session.status_rescheduled", wake_id: wake.id }],
    });
    return wake;
  });
}

/**
 * Gives up on a wake that lost its worker too often: the wake fails, and the session gets
 * `session.error{lease_lost, exhausted}` and goes idle with `retries_exhausted`, so its client sees
 * why the turn ended. Null when the lease moved on before this ran.
 */
export function exhaustExpiredWake(db: Kysely<Database>, expired: ExpiredLease): Promise<WakeRow | null> {
  return withTenant(db, expired.tenant_id, async (trx) => {
    const failed = await fenceOut(
      trx,
      {
        tenantId: expired.tenant_id,
        sessionId: expired.session_id,
        wakeId: expired.id,
        expectedEpoch: expired.lease_epoch,
      },
      () => ({ status: "failed", lease_expires_at: null, finished_at: sql<Date>`now()` }),
    );
    if (failed === null) return null;
    await append(trx, {
      tenantId: expired.tenant_id,
      sessionId: expired.session_id,
      events: [
        {
          type: "session.error",
          wake_id: failed.id,
          error: {
            type: "lease_lost",
            message: `the wake lost its worker ${failed.attempt} times`,
            retry_status: { type: "exhausted" },
          },
        },
        { type: "session.status_idle", wake_id: failed.id, stop_reason: { type: "retries_exhausted" } },
      ],
    });
    return failed;
  });
}

/**
 * Locks the session, applies `set` to the wake if its lease is still the expired one (same epoch,
 * still running, past its expiry by the database clock) and bumps the session's epoch. A lease renewed
 * after the sweeper read it has a later expiry, so it is left alone.
 */
async function fenceOut(
  trx: Transaction<Database>,
  target: RequeueWakeInput & { sessionId: string },
  set: (eb: ExpressionBuilder<Database, "wakes">) => UpdateObject<Database, "wakes">,
): Promise<WakeRow | null> {
  await trx
    .selectFrom("sessions")
    .select("id")
    .where("id", "=", target.sessionId)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const wake = await trx
    .updateTable("wakes")
    .set(set)
    .where("id", "=", target.wakeId)
    .where("status", "=", "running")
    .where("lease_epoch", "=", target.expectedEpoch)
    .where("lease_expires_at", "<", sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst();
  if (wake === undefined) return null;
  await trx
    .updateTable("sessions")
    .set((eb) => ({ lease_epoch: eb("lease_epoch", "+", 1) }))
    .where("id", "=", target.sessionId)
    .execute();
  return wake;
}
