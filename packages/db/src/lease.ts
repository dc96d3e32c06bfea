import { type SessionEvent, WakeloopError } from "@wakeloop/contracts";
import { type Kysely, type RawBuilder, type Selectable, sql } from "kysely";
import type { Database, SessionsTable } from "./database";
import { eventFromJson, type SessionRow, sessionFromRow } from "./event-rows";
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
 * the wake (e.g. `append` then `requeueWake`), or two transactions can deadlock.
 */

function checkTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) {
    throw new WakeloopError("invalid_lease_ttl", `lease ttl must be a positive integer of ms, got ${ttlMs}`);
  }
}

function expiresIn(ttlMs: number): RawBuilder<Date> {
  checkTtl(ttlMs);
  return sql<Date>`now() + ${ttlMs}::integer * interval '1 millisecond'`;
}

export interface AcquireLeaseInput {
  tenantId: string;
  sessionId: string;
  wakeId: string;
  workerId: string;
  ttlMs: number;
}

/** What a wake starts from: its epoch, the session row, its pinned agent spec and environment spec. */
export interface AcquiredLease {
  epoch: number;
  session: SessionRow;
  /** The pinned agent version's spec and the environment's, as stored: read them through their schemas. */
  agentSpec: unknown;
  environmentSpec: unknown;
}

/**
 * Takes a `queued` wake in one round trip: bumps the session's epoch, marks the wake running under it
 * and returns what the wake starts from. Returns null when the wake is not queued any more (taken by
 * another worker, finished or cancelled), which is the normal outcome of a duplicate wake-job
 * delivery. It is `startWake` without the history page.
 */
export async function acquireLease(
  db: Kysely<Database>,
  input: AcquireLeaseInput,
): Promise<AcquiredLease | null> {
  return startWake(db, { ...input, knownSeq: 0, pageSize: 0 });
}

type LeaseRow = Selectable<SessionsTable> & { agent_spec: unknown; environment_spec: unknown };

function leaseFromRow({ agent_spec, environment_spec, ...session }: LeaseRow): AcquiredLease {
  return {
    epoch: session.lease_epoch,
    session: sessionFromRow(session),
    agentSpec: agent_spec,
    environmentSpec: environment_spec,
  };
}

export interface StartWakeInput extends AcquireLeaseInput {
  /** Events the caller already holds (a prefix of the history): the page starts after them. */
  knownSeq: number;
  /** The most events the page holds. */
  pageSize: number;
}

/** A wake's lease with the first page of its history and whether its agent has tools of its own. */
export interface StartedWake extends AcquiredLease {
  /** Events after `knownSeq`, up to the session's last seq, at most `pageSize` of them. */
  events: SessionEvent[];
  hasAgentTools: boolean;
}

/**
 * `acquireLease` with what a wake reads next, in one round trip (`wl_start_wake`, migration 0030):
 * the first page of the history after the events the caller holds, and whether the agent has tools
 * of its own (`listAgentTools` is worth a read only then). Null as for `acquireLease`.
 */
export async function startWake(db: Kysely<Database>, input: StartWakeInput): Promise<StartedWake | null> {
  checkTtl(input.ttlMs);
  const { rows } = await sql<
    LeaseRow & { has_agent_tools: boolean; events: Array<Record<string, unknown>> }
  >`SELECT * FROM wl_start_wake(${input.tenantId}, ${input.sessionId}, ${input.wakeId}, ${input.workerId},
    ${input.ttlMs}::integer, ${input.knownSeq}::integer, ${input.pageSize}::integer)`.execute(db);
  const [row] = rows;
  if (row === undefined) return null;
  const { has_agent_tools, events, ...lease } = row;
  return { ...leaseFromRow(lease), events: events.map(eventFromJson), hasAgentTools: has_agent_tools };
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
