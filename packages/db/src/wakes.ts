import type { WakeReason } from "@wakeloop/contracts";
import { type Kysely, sql } from "kysely";
import type { Database, WakeRow } from "./database";
import { newId } from "./ids";

export interface OpenWakeInput {
  tenantId: string;
  sessionId: string;
  reason: WakeReason;
  dueAt?: Date;
}

/**
 * Records a queued wake without claiming any for publishing (`scheduleWake` with no room), or returns
 * null when the session already has an open one (queued or running). The insert is ON CONFLICT DO
 * NOTHING, so it is safe inside a caller's transaction: a conflict does not abort it.
 */
export async function openWake(db: Kysely<Database>, input: OpenWakeInput): Promise<QueuedWakeJob | null> {
  return (await scheduleWake(db, { ...input, maxInFlight: 0 })).opened;
}

export interface ScheduleWakeInput extends OpenWakeInput {
  /** The tenant's limit of wakes in flight, as for `claimWakesToPublish`. */
  maxInFlight: number;
}

/**
 * Opens a queued wake unless the session has an open one and, when it opened one, claims what its
 * tenant may publish now (`claimWakesToPublish`): one round trip (`wl_open_wake`). `opened` is null
 * when the session already had an open wake.
 */
export async function scheduleWake(
  db: Kysely<Database>,
  input: ScheduleWakeInput,
): Promise<{ opened: QueuedWakeJob | null; claimed: QueuedWakeJob[] }> {
  const id = newId("wake");
  const { rows } = await sql<{ opened: boolean; wake: QueuedWakeJob | null }>`SELECT * FROM wl_open_wake(
    ${input.tenantId}, ${input.sessionId}, ${id}, ${input.reason}, ${input.dueAt ?? new Date()}::timestamptz,
    ${input.maxInFlight}::integer)`.execute(db);
  if (rows.length === 0) return { opened: null, claimed: [] };
  const claimed = rows.flatMap((row) =>
    row.wake === null
      ? []
      : [
          {
            id: row.wake.id,
            tenant_id: row.wake.tenant_id,
            session_id: row.wake.session_id,
            attempt: row.wake.attempt,
            reason: row.wake.reason,
          },
        ],
  );
  const opened = {
    id,
    tenant_id: input.tenantId,
    session_id: input.sessionId,
    attempt: 1,
    reason: input.reason,
  };
  return { opened, claimed };
}

/** A queued wake the sweeper republishes: the fields of its job, nothing else. */
export type QueuedWakeJob = Pick<WakeRow, "id" | "tenant_id" | "session_id" | "attempt" | "reason">;

/**
 * Queued wakes due before `before`, oldest first, across tenants: their job may be gone (NATS wiped),
 * so the sweeper publishes them again. Tenant-blind, so it reads through a definer function.
 */
export async function staleQueuedWakes(
  db: Kysely<Database>,
  before: Date,
  limit = 100,
): Promise<QueuedWakeJob[]> {
  const result = await sql<QueuedWakeJob>`SELECT * FROM wl_stale_queued_wakes(${before}, ${limit})`.execute(
    db,
  );
  return result.rows;
}
