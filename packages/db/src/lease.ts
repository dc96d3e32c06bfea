import type { SessionEvent } from "@wakeloop/contracts";
import { WakeloopError } from "@wakeloop/contracts";
import { reduceSessionState } from "@wakeloop/session-core";
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import type { Database, WakeRow, WakeStatus } from "./database";
import { type SessionRow, sessionFromRow } from "./event-rows";
import { appendInTx, type NewEvent } from "./event-store";
import { scopeTransaction, withTenant } from "./tenant-scope";

/*
 * Leases and fencing (invariant 3). A worker owns a session while its wake is `running` with an
 * unexpired lease; every acquisition and every re-queue bumps `sessions.lease_epoch`, and appends
 * carry the epoch as a fence, so a worker that lost its lease can never write again.
 *
 * All lease times use the database clock, so workers and the sweeper never disagree through skew.
 * Renewal and re-queue are each one conditional UPDATE of the same wake row: Postgres serializes
 * them on the row lock and re-checks the loser's WHERE against the winner's result, so a lease is
 * either renewed or re-queued, never both.
 *
 * Lock order is session row, then wake row. Inside one transaction, append events before touching
 * the wake (e.g. `appendInTx` then `finishWake`), or two transactions can deadlock.
 */

function expiresIn(ttlMs: number): RawBuilder<Date> {
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) {
    throw new WakeloopError("invalid_lease_ttl", `lease ttl must be a positive integer of ms, got ${ttlMs}`);
  }
  return sql<Date>`now() + ${ttlMs}::integer * interval '1 millisecond'`;
}

export interface AcquireLeaseInput {
  tenantId: string;
  sessionId: string;
  wakeId: string;
  workerId: string;
  ttlMs: number;
  /** Appended under the new epoch in the same transaction (e.g. `session.status_running`). */
  events?: readonly NewEvent[];
}

/**
 * Takes a `queued` wake: bumps the session's epoch and marks the wake running under it, appending
 * `events` under that epoch in the same transaction. Returns null
 * when the wake is not queued any more (taken by another worker, finished or cancelled), which is
 * the normal outcome of a duplicate wake-job delivery.
 */
export function acquireLease(
  db: Kysely<Database>,
  input: AcquireLeaseInput,
): Promise<{ epoch: number; events: SessionEvent[]; session: SessionRow } | null> {
  const expiresAt = expiresIn(input.ttlMs);
  return withTenant(db, input.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("sessions")
      .selectAll()
      .where("tenant_id", "=", input.tenantId)
      .where("id", "=", input.sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined) return null;
    const before = sessionFromRow(row);
    const epoch = before.lease_epoch + 1;
    const wake = await trx
      .updateTable("wakes")
      .set({
        status: "running",
        worker_id: input.workerId,
        lease_epoch: epoch,
        lease_expires_at: expiresAt,
        started_at: sql<Date>`now()`,
      })
      .where("id", "=", input.wakeId)
      .where("tenant_id", "=", input.tenantId)
      .where("session_id", "=", input.sessionId)
      .where("status", "=", "queued")
      .returning("id")
      .executeTakeFirst();
    if (wake === undefined) return null;
    await trx.updateTable("sessions").set({ lease_epoch: epoch }).where("id", "=", input.sessionId).execute();
    const events = input.events?.length
      ? await appendInTx(trx, {
          tenantId: input.tenantId,
          sessionId: input.sessionId,
          events: input.events.map((event) => ({ ...event, wake_id: input.wakeId })),
          fence: epoch,
        })
      : [];
    // The session as this transaction leaves it, so the wake needs no read of its own to start.
    const state = events.reduce(reduceSessionState, before.state);
    const last = events.at(-1);
    const updatedAt = last === undefined ? before.updated_at : new Date(last.created_at);
    return {
      epoch,
      events,
      session: {
        ...before,
        lease_epoch: epoch,
        state,
        status: state.status,
        last_seq: state.last_seq,
        updated_at: updatedAt,
      },
    };
  });
}

export interface HeldLease {
  wakeId: string;
  epoch: number;
}

/**
 * Extends the tenant's held leases in one statement (a worker renews all of a tenant's wakes per
 * tick instead of one transaction each) and returns the ids it renewed; a lease missing from the
 * result is lost (re-queued or finished): stop that wake. A lease that expired but was not re-queued
 * yet is still renewed, since nobody else can hold it. The rows are locked in no fixed order: two
 * renewals only contend over a wake one of them lost, and Postgres' deadlock check would fail one,
 * which renews again at its next tick.
 */
export async function renewLeases(
  db: Kysely<Database>,
  tenantId: string,
  leases: readonly HeldLease[],
  ttlMs: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const expiresAt = expiresIn(ttlMs);
  const ids = leases.map((lease) => lease.wakeId);
  const epochs = leases.map((lease) => lease.epoch);
  const renewed = await withTenant(db, tenantId, (trx) =>
    sql<{ id: string }>`
      UPDATE wakes w SET lease_expires_at = ${expiresAt}
      FROM unnest(${ids}::text[], ${epochs}::bigint[]) AS held(id, epoch)
      WHERE w.id = held.id AND w.lease_epoch = held.epoch AND w.tenant_id = ${tenantId}
        AND w.status = 'running'
      RETURNING w.id`.execute(trx),
  );
  return new Set(renewed.rows.map((row) => row.id));
}

export interface FinishWakeInput {
  tenantId: string;
  wakeId: string;
  epoch: number;
  status: Extract<WakeStatus, "completed" | "failed" | "cancelled">;
}

/** Closes a running wake held under `epoch`; false if the lease was lost first. Accepts a transaction. */
export async function finishWake(db: Kysely<Database>, input: FinishWakeInput): Promise<boolean> {
  const finished = await withTenant(db, input.tenantId, (trx) =>
    trx
      .updateTable("wakes")
      .set({ status: input.status, lease_expires_at: null, finished_at: sql<Date>`now()` })
      .where("id", "=", input.wakeId)
      .where("tenant_id", "=", input.tenantId)
      .where("status", "=", "running")
      .where("lease_epoch", "=", input.epoch)
      .returning("id")
      .executeTakeFirst(),
  );
  return finished !== undefined;
}

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
 * Puts a wake whose lease expired back in the queue (attempt + 1) and bumps the session's epoch, so
 * the stalled worker is fenced out. Runs in the caller's transaction, which appends
 * `session.status_rescheduled` with it. Returns the re-queued wake, or null when the lease was
 * renewed, finished or already re-queued in the meantime.
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
  await trx
    .selectFrom("sessions")
    .select("id")
    .where("id", "=", target.session_id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const wake = await trx
    .updateTable("wakes")
    .set((eb) => ({
      status: "queued",
      attempt: eb("attempt", "+", 1),
      worker_id: null,
      lease_epoch: null,
      lease_expires_at: null,
      due_at: sql<Date>`now()`,
    }))
    .where("id", "=", input.wakeId)
    .where("status", "=", "running")
    .where("lease_epoch", "=", input.expectedEpoch)
    .where("lease_expires_at", "<", sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst();
  if (wake === undefined) return null;
  await trx
    .updateTable("sessions")
    .set((eb) => ({ lease_epoch: eb("lease_epoch", "+", 1) }))
    .where("id", "=", target.session_id)
    .execute();
  return wake;
}
