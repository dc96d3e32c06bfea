import { Id, WakeReason } from "@wakeloop/contracts";
import { type Kysely, sql } from "kysely";
import { z } from "zod";
import type { Database, WakeRow } from "./database";
import type { SessionRow } from "./event-rows";
import { newId } from "./ids";
import { readJson } from "./json-readers";
import { readSession } from "./session-queries";

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

export interface ScheduledWake {
  /** The wake opened; null when the session already had an open wake (or none was asked for). */
  opened: QueuedWakeJob | null;
  /** The tenant's wakes this call marked published, for the caller to publish. */
  claimed: QueuedWakeJob[];
  /**
   * The opened wake is held (its tenant had no room, or another claim had its tenant's lock): once this
   * call's transaction has committed, the caller claims again (`claimWakesToPublish`), since a wake that
   * ended meanwhile, or that other claim, may not have seen it (migration 0034 has the reasoning).
   */
  held: boolean;
}

/**
 * Opens a queued wake unless the session has an open one and, when it opened one and its tenant's
 * dispatch lock is free, claims what its tenant may publish now (`claimWakesToPublish`): one round trip
 * (`wl_open_wake`).
 */
export async function scheduleWake(db: Kysely<Database>, input: ScheduleWakeInput): Promise<ScheduledWake> {
  const id = newId("wake");
  const { rows } = await sql<OpenWakeRow>`SELECT * FROM wl_open_wake(
    ${input.tenantId}, ${input.sessionId}, ${id}, ${input.reason}, ${input.dueAt ?? new Date()}::timestamptz,
    ${input.maxInFlight}::integer)`.execute(db);
  return scheduledWake(rows, {
    id,
    tenant_id: input.tenantId,
    session_id: input.sessionId,
    reason: input.reason,
  });
}

/** A row of `wl_open_wake`: the wake it opened (`opened`, no job), or a job it claimed (JSON). */
export interface OpenWakeRow {
  opened: boolean;
  wake: unknown;
}

/** A job `wl_open_wake` claimed, as its JSON reads back. */
const ClaimedWake = z.object({
  id: Id,
  tenant_id: Id,
  session_id: Id,
  attempt: z.number().int().positive(),
  reason: WakeReason,
});

/** What `wl_open_wake` answered for the wake it was asked to open (no rows: the session had one). */
export function scheduledWake(
  rows: readonly OpenWakeRow[],
  asked: Omit<QueuedWakeJob, "attempt">,
): ScheduledWake {
  if (rows.length === 0) return NOT_SCHEDULED;
  const claimed = rows.flatMap(({ wake }) =>
    wake === null ? [] : [readJson(ClaimedWake, wake, "claimed wake job")],
  );
  const opened = { ...asked, attempt: 1 };
  return { opened, claimed, held: !claimed.some((job) => job.id === asked.id) };
}

/** No wake opened, none claimed. */
export const NOT_SCHEDULED: ScheduledWake = { opened: null, claimed: [], held: false };

/**
 * The session when it has no open wake (queued or running), null when it has one or does not exist:
 * whether it still needs a wake is then the reducer's `wakeReason` of its state. One round trip
 * (`wl_session_awaiting_wake`), so an event whose wake is already open costs one read.
 */
export function sessionAwaitingWake(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
): Promise<SessionRow | null> {
  return readSession(db, "wl_session_awaiting_wake", tenantId, sessionId);
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
