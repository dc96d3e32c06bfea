import {
  type EventPayload,
  type SessionEvent,
  type SessionState,
  WakeloopError,
  type WakeReason,
} from "@wakeloop/contracts";
import { reduceSessionState } from "@wakeloop/session-core";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Database, ToolCallStatus, WakeStatus } from "./database";
import { toSessionEvent } from "./event-rows";
import { newId } from "./ids";
import { readSessionState } from "./json-readers";
import { isUniqueViolation } from "./pg-errors";
import { inTransaction } from "./tenant-scope";
import {
  NOT_SCHEDULED,
  type OpenWakeRow,
  type QueuedWakeJob,
  type ScheduledWake,
  scheduledWake,
} from "./wakes";

/** An event to append: its payload, plus envelope fields the caller may choose. */
export type NewEvent = EventPayload & { id?: string; wake_id?: string | null; trace_id?: string | null };

export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

/** The session as a writer last saw it: when it is still the head, an append is one round trip. */
export interface SessionHead {
  lastSeq: number;
  state: SessionState;
}

/** A tool call entering the ledger (invariant 4): `planned`, or already settled when it ran in the commit. */
export interface ToolCallRecord {
  id: string;
  name: string;
  input: Record<string, unknown>;
  idempotent: boolean;
  status: ToolCallStatus;
  result?: unknown;
}

/** The outcome of a call recorded earlier. */
export interface ToolCallUpdate {
  id: string;
  status: ToolCallStatus;
  result?: unknown;
}

/** A `set_state` write of the session's agent that commits with the append. */
export interface AgentStateWrite {
  key: string;
  value: unknown;
}

/** The tool-call ledger rows a wake commits with its events. */
export interface ToolCallWrites {
  wakeId: string;
  /** The batch plan the recorded calls belong to, stored with them. */
  batchPlan?: unknown;
  record?: readonly ToolCallRecord[];
  settle?: readonly ToolCallUpdate[];
}

export interface AppendInput {
  tenantId: string;
  sessionId: string;
  events: readonly NewEvent[];
  /** The caller's lease epoch: the append is refused unless it is still the session's (invariant 3). */
  fence?: number;
  /** Where the caller believes the session is; without it the first round trip only learns the head. */
  head?: SessionHead;
  /**
   * When another writer moved the head first: fold the events again on the new head (the default,
   * for events that do not depend on the state the caller saw), or refuse with `session_head_moved`,
   * writing nothing, so a caller that checked its events against that state can check them again.
   */
  onMovedHead?: "refold" | "refuse";
  now?: Date;
  /** W3C trace context, carried to the bus in the headers of the commit's outbox row. */
  traceHeaders?: TraceHeaders;
  toolCalls?: ToolCallWrites;
  /**
   * The session agent's state writes (a state-tool step), made in the same statement once the append
   * passed its checks (`wl_append_state`, migration 0030); in order, so a key written twice keeps the
   * last value.
   */
  agentState?: readonly AgentStateWrite[];
  /** Closes the caller's wake in the same commit, so a session is never idle under an open wake. */
  finishWake?: {
    wakeId: string;
    epoch: number;
    status: Extract<WakeStatus, "completed" | "failed" | "cancelled">;
  };
  /**
   * Opens the wake the append leaves the session needing, in the same statement once the append
   * passed its checks (`wl_append_open_wake`, migration 0035), as `scheduleWake` opens it: the
   * session's wake is never missing between the events' commit and its own.
   */
  openWake?: {
    /** The reason to wake the session as the append leaves it (folded again on a moved head); null: none. */
    reasonFor(state: SessionState): WakeReason | null;
    /** The tenant's limit of wakes in flight, as for `scheduleWake`. */
    maxInFlight: number;
  };
}

export interface Appended {
  events: SessionEvent[];
  /** The session as this append left it. */
  head: SessionHead;
  /** The wake `openWake` opened and the jobs it claimed (`scheduleWake`'s answer). */
  wake: ScheduledWake;
}

// Optimistic attempts before a writer takes the session row's lock for its next attempt: a session
// written by many at once (a burst of client events) still lets every writer through.
const OPTIMISTIC_ATTEMPTS = 2;

/**
 * The one way to change a session (invariant 2): one call of `wl_append` (migration 0011), which locks
 * the session row, checks the fence and that the events were folded onto the current head, and writes
 * the events with gapless seqs, their outbox rows, the projection, the consumed messages and the given
 * ledger rows and wake end, or nothing. The projection is folded here, by the reducer. A stale head is
 * answered with the current one and folded again; inside a caller's transaction the row lock is then
 * held, so the second attempt is the last. Joins the caller's transaction when given one.
 */
export async function append(db: Kysely<Database>, input: AppendInput): Promise<SessionEvent[]> {
  if (writesNothing(input)) return [];
  return (await write(db, input)).events;
}

/** `append` from a known head, returning the head it left: the session loop's writes. */
export function appendAt(
  db: Kysely<Database>,
  input: AppendInput & { head: SessionHead },
): Promise<Appended> {
  return writesNothing(input)
    ? Promise.resolve({ events: [], head: input.head, wake: NOT_SCHEDULED })
    : write(db, input);
}

function writesNothing(input: AppendInput): boolean {
  return (
    input.events.length === 0 &&
    input.toolCalls === undefined &&
    input.finishWake === undefined &&
    !input.agentState?.length
  );
}

async function write(db: Kysely<Database>, input: AppendInput): Promise<Appended> {
  const now = input.now ?? new Date();
  const envelopes = input.events.map((event) => ({ ...event, id: event.id ?? newId("event") }));
  let head = input.head;
  for (let attempt = 1; ; attempt++) {
    const folded = head === undefined ? null : fold(head, envelopes, input.sessionId, now);
    const wake = folded === null ? null : wakeToOpen(input, folded.head.state);
    const answer = await callAppend(db, input, folded, wake, now);
    if (answer.outcome === "appended" && folded !== null) {
      const scheduled = wake === null ? NOT_SCHEDULED : scheduledWake(answer.wakes ?? [], wake);
      return { events: folded.events, head: folded.head, wake: scheduled };
    }
    if (answer.outcome === "not_found") {
      throw new WakeloopError("session_not_found", `session ${input.sessionId} does not exist`, {
        details: { session_id: input.sessionId },
      });
    }
    if (answer.outcome === "stale_fence") {
      throw new WakeloopError("stale_fence", "the lease on this session was lost; another wake owns it", {
        details: { session_id: input.sessionId, fence: input.fence, lease_epoch: answer.lease_epoch },
      });
    }
    if (input.onMovedHead === "refuse") {
      throw new WakeloopError("session_head_moved", "the session changed since it was read", {
        retryable: true,
        details: { session_id: input.sessionId, last_seq: answer.last_seq },
      });
    }
    if (attempt >= OPTIMISTIC_ATTEMPTS) {
      // The first call in a transaction keeps the row locked, so the head it answers is the last one.
      const moved = { lastSeq: answer.last_seq ?? 0, state: readSessionState(answer.state) };
      if (!inTransaction(db)) return db.transaction().execute((trx) => write(trx, { ...input, head: moved }));
      if (attempt > OPTIMISTIC_ATTEMPTS)
        throw new Error("wl_append answered a stale head under its own lock");
    }
    head = { lastSeq: answer.last_seq ?? 0, state: readSessionState(answer.state) };
  }
}

interface Folded {
  events: SessionEvent[];
  head: SessionHead;
  /** Messages committed up to this seq are consumed by a model request in the batch (0: none). */
  consumedUpTo: number;
}

/** Gapless seqs after the head, the projection folded over them, and what a model request consumes. */
function fold(
  head: SessionHead,
  envelopes: ReadonlyArray<NewEvent & { id: string }>,
  sessionId: string,
  now: Date,
): Folded {
  const createdAt = now.toISOString();
  const events: SessionEvent[] = [];
  let state = head.state;
  let consumedUpTo = 0;
  for (const [index, { id, wake_id, trace_id, ...payload }] of envelopes.entries()) {
    if (payload.type === "span.model_request_start") {
      // Messages committed before this append are stamped by the function; those in it, here.
      consumedUpTo = head.lastSeq;
      for (const [at, prior] of events.entries()) {
        if (prior.type === "user.message" && prior.processed_at === null)
          events[at] = { ...prior, processed_at: createdAt };
      }
    }
    const envelope = {
      id,
      session_id: sessionId,
      seq: head.lastSeq + index + 1,
      processed_at: null,
      created_at: createdAt,
      wake_id: wake_id ?? null,
      trace_id: trace_id ?? null,
    };
    events.push(toSessionEvent(envelope, payload as EventPayload));
  }
  for (const event of events) state = reduceSessionState(state, event);
  return { events, head: { lastSeq: state.last_seq, state }, consumedUpTo };
}

/** The wake an append opens, for the reason the state it folded gives. */
type WakeToOpen = Omit<QueuedWakeJob, "attempt">;

function wakeToOpen(input: AppendInput, state: SessionState): WakeToOpen | null {
  const reason = input.openWake?.reasonFor(state) ?? null;
  if (reason === null) return null;
  return { id: newId("wake"), tenant_id: input.tenantId, session_id: input.sessionId, reason };
}

interface AppendAnswer {
  outcome: "appended" | "not_found" | "stale_fence" | "stale_head";
  last_seq: number | null;
  lease_epoch: number | null;
  state: unknown;
  /** `wl_append_open_wake`'s rows of `wl_open_wake`. */
  wakes?: OpenWakeRow[];
}

async function callAppend(
  db: Kysely<Database>,
  input: AppendInput,
  folded: Folded | null,
  wake: WakeToOpen | null,
  now: Date,
): Promise<AppendAnswer> {
  const rows = folded?.events.map(
    ({ id, session_id, seq, processed_at, created_at, wake_id, trace_id, ...body }) => ({
      seq,
      id,
      type: body.type,
      body,
      processed_at,
      created_at,
      wake_id,
      trace_id,
    }),
  );
  const calls = input.toolCalls;
  const batchId = calls?.batchPlan === undefined ? null : newId("toolBatch");
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
  const agentState = input.agentState?.length ? input.agentState : undefined;
  if (agentState !== undefined && input.openWake !== undefined) {
    throw new Error("an append writes agent state or opens a wake, not both (no function does both)");
  }
  // `wl_append`'s arguments, then those of the function that composes it, if any.
  const [fn, more] =
    agentState !== undefined
      ? [
          "wl_append_state",
          sql`, ${json(agentState.map(({ key, value }) => ({ key, value: value ?? null })))}::jsonb`,
        ]
      : input.openWake !== undefined
        ? [
            "wl_append_open_wake",
            sql`, ${wake?.id ?? null}, ${wake?.reason ?? null}, ${input.openWake.maxInFlight}::integer`,
          ]
        : ["wl_append", sql``];
  try {
    const { rows: answer } = await sql<AppendAnswer>`SELECT * FROM ${sql.raw(fn)}(
      ${input.tenantId}, ${input.sessionId}, ${input.fence ?? null}::bigint,
      ${folded === null ? null : folded.head.lastSeq - folded.events.length}::integer,
      ${json(folded?.head.state)}::jsonb, ${json(rows ?? [])}::jsonb, ${json(input.traceHeaders ?? {})}::jsonb,
      ${now}::timestamptz, ${folded?.consumedUpTo ?? 0}::integer,
      ${json(batchId === null ? undefined : { id: batchId, wake_id: calls?.wakeId, plan: calls?.batchPlan })}::jsonb,
      ${json(
        calls?.record?.length
          ? calls.record.map((call) => ({
              ...call,
              wake_id: calls.wakeId,
              batch_id: batchId,
              result: call.result ?? null,
            }))
          : undefined,
      )}::jsonb,
      ${json(calls?.settle?.length ? calls.settle.map((call) => ({ ...call, result: call.result ?? null })) : undefined)}::jsonb,
      ${json(input.finishWake && { wake_id: input.finishWake.wakeId, epoch: input.finishWake.epoch, status: input.finishWake.status })}::jsonb
      ${more}
    )`.execute(db);
    const [first] = answer;
    if (first === undefined) throw new Error("wl_append returned no row");
    return first;
  } catch (error) {
    if (isUniqueViolation(error, "session_events_id_key")) {
      throw new WakeloopError("duplicate_event_id", "an event with one of these ids already exists", {
        cause: error,
        details: { event_ids: folded?.events.map((event) => event.id) },
      });
    }
    if (error instanceof pg.DatabaseError && error.code === "WL001") {
      throw new WakeloopError("tenant_scope_mismatch", "one transaction cannot act for two tenants", {
        cause: error,
        details: { requested: input.tenantId },
      });
    }
    throw error;
  }
}
