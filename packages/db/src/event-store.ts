import { EventEnvelope, EventPayload, type SessionEvent, WakeloopError } from "@wakeloop/contracts";
import { reduceSessionState } from "@wakeloop/session-core";
import type { Kysely, Transaction } from "kysely";
import type { Database } from "./database";
import { toSessionEvent } from "./event-rows";
import { newId } from "./ids";
import { readSessionState } from "./json-readers";
import { isUniqueViolation } from "./pg-errors";
import { scopeTransaction, withTenant } from "./tenant-scope";

/** An event to append: its payload, plus envelope fields the caller may choose. */
export type NewEvent = EventPayload & { id?: string; wake_id?: string | null; trace_id?: string | null };

export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

export interface AppendInput {
  tenantId: string;
  sessionId: string;
  events: readonly NewEvent[];
  /** The caller's lease epoch: the append is refused unless it is still the session's (invariant 3). */
  fence?: number;
  now?: Date;
  /** W3C trace context, carried to the bus in each outbox row's headers. */
  traceHeaders?: TraceHeaders;
}

interface CheckedEvent {
  id: string;
  wakeId: string | null;
  traceId: string | null;
  payload: EventPayload;
}

/** Appends events in their own transaction. See `appendInTx`. */
export function append(db: Kysely<Database>, input: AppendInput): Promise<SessionEvent[]> {
  return withTenant(db, input.tenantId, (trx) => appendInTx(trx, input));
}

/**
 * The one way to change a session (invariant 2), inside the caller's transaction so tool calls and
 * wakes can commit atomically with the events that explain them. Locks the session row, checks the
 * fence, gives the events gapless seqs, folds them into the projection and queues one outbox row per
 * event for the relay. Returns the events as they will be committed.
 */
export async function appendInTx(trx: Transaction<Database>, input: AppendInput): Promise<SessionEvent[]> {
  const checked = input.events.map(checkEvent);
  if (checked.length === 0) return [];
  await scopeTransaction(trx, input.tenantId);

  const session = await trx
    .selectFrom("sessions")
    .select(["state", "last_seq", "lease_epoch"])
    .where("tenant_id", "=", input.tenantId)
    .where("id", "=", input.sessionId)
    .forUpdate()
    .executeTakeFirst();
  if (session === undefined) {
    throw new WakeloopError("session_not_found", `session ${input.sessionId} does not exist`, {
      details: { session_id: input.sessionId },
    });
  }
  if (input.fence !== undefined && session.lease_epoch !== input.fence) {
    throw new WakeloopError("stale_fence", "the lease on this session was lost; another wake owns it", {
      details: { session_id: input.sessionId, fence: input.fence, lease_epoch: session.lease_epoch },
    });
  }

  const now = input.now ?? new Date();
  const committed = assignEnvelopes(checked, input.sessionId, session.last_seq, now.toISOString());
  const events = committed.map(({ event }) => event);
  let state = readSessionState(session.state);
  for (const event of events) state = reduceSessionState(state, event);

  // Messages committed before this append are consumed by a model request in it (those inside the batch
  // were stamped in assignEnvelopes); all share `now`, the request's created_at. Seq 0 stamps nothing.
  const consumedUpTo = events.some((event) => event.type === "span.model_request_start")
    ? session.last_seq
    : 0;

  const headers = JSON.stringify(input.traceHeaders ?? {});
  try {
    // One statement (data-modifying CTEs) for events, outbox, consumed messages and projection: one
    // round trip while the session row is locked, which is what bounds a busy session's append rate.
    await trx
      .with("consumed_messages", (db) =>
        db
          .updateTable("session_events")
          .set({ processed_at: now })
          .where("session_id", "=", input.sessionId)
          .where("type", "=", "user.message")
          .where("processed_at", "is", null)
          .where("seq", "<=", consumedUpTo),
      )
      .with("inserted_events", (db) =>
        db.insertInto("session_events").values(
          committed.map(({ event, payload }) => ({
            session_id: input.sessionId,
            seq: event.seq,
            id: event.id,
            tenant_id: input.tenantId,
            type: event.type,
            body: JSON.stringify(payload),
            processed_at: event.processed_at,
            created_at: now,
            wake_id: event.wake_id ?? null,
            trace_id: event.trace_id ?? null,
          })),
        ),
      )
      .with("queued_messages", (db) =>
        db.insertInto("outbox").values(
          events.map((event) => ({
            tenant_id: input.tenantId,
            topic: `evt.${input.tenantId}.${input.sessionId}.${event.type}`,
            msg_id: event.id,
            body: JSON.stringify(event),
            headers,
          })),
        ),
      )
      .updateTable("sessions")
      .set({ state: JSON.stringify(state), status: state.status, last_seq: state.last_seq, updated_at: now })
      .where("id", "=", input.sessionId)
      .execute();
  } catch (error) {
    if (isUniqueViolation(error, "session_events_id_key")) {
      throw new WakeloopError("duplicate_event_id", "an event with one of these ids already exists", {
        cause: error,
        details: { event_ids: events.map((event) => event.id) },
      });
    }
    throw error;
  }

  return events;
}

function checkEvent(event: NewEvent): CheckedEvent {
  const { id, wake_id, trace_id, ...rest } = event;
  const payload = EventPayload.safeParse(rest);
  if (!payload.success) {
    throw new WakeloopError("invalid_event", `event ${rest.type} does not match its schema`, {
      cause: payload.error,
      details: { issues: payload.error.issues },
    });
  }
  const traceId = EventEnvelope.shape.trace_id.safeParse(trace_id);
  if (!traceId.success) {
    throw new WakeloopError("invalid_event", "trace_id must be 32 lowercase hex characters", {
      cause: traceId.error,
    });
  }
  return {
    id: id ?? newId("event"),
    wakeId: wake_id ?? null,
    traceId: traceId.data ?? null,
    payload: payload.data,
  };
}

/** Gapless seqs after `lastSeq`; a model request start in the batch consumes the messages before it. */
function assignEnvelopes(
  checked: readonly CheckedEvent[],
  sessionId: string,
  lastSeq: number,
  createdAt: string,
): Array<{ event: SessionEvent; payload: EventPayload }> {
  const committed: Array<{ event: SessionEvent; payload: EventPayload }> = [];
  for (const [index, { id, wakeId, traceId, payload }] of checked.entries()) {
    if (payload.type === "span.model_request_start") {
      for (const prior of committed) {
        if (prior.event.type === "user.message" && prior.event.processed_at === null) {
          prior.event = { ...prior.event, processed_at: createdAt };
        }
      }
    }
    const envelope = {
      id,
      session_id: sessionId,
      seq: lastSeq + index + 1,
      processed_at: null,
      created_at: createdAt,
      wake_id: wakeId,
      trace_id: traceId,
    };
    committed.push({ event: toSessionEvent(envelope, payload), payload });
  }
  return committed;
}
