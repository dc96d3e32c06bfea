import type { SessionEvent } from "@wakeloop/contracts";
import { WakeloopError } from "@wakeloop/contracts";
import { reduceSessionState } from "@wakeloop/session-core";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database, WakeStatus } from "./database";
import { type SessionRow, sessionFromRow } from "./event-rows";
import { appendInTx, type NewEvent } from "./event-store";
import { withTenant } from "./tenant-scope";

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

export interface RenewLeaseInput {
  tenantId: string;
  wakeId: string;
  epoch: number;
  ttlMs: number;
}

/**
 * Extends a held lease. False means the lease is lost (re-queued or finished): stop the wake. A lease
 * that expired but was not re-queued yet is still renewed, since nobody else can hold it.
 */
export async function renewLease(db: Kysely<Database>, input: RenewLeaseInput): Promise<boolean> {
  const expiresAt = expiresIn(input.ttlMs);
  const renewed = await withTenant(db, input.tenantId, (trx) =>
    trx
      .updateTable("wakes")
      .set({ lease_expires_at: expiresAt })
      .where("id", "=", input.wakeId)
      .where("tenant_id", "=", input.tenantId)
      .where("status", "=", "running")
      .where("lease_epoch", "=", input.epoch)
      .returning("id")
      .executeTakeFirst(),
  );
  return renewed !== undefined;
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
