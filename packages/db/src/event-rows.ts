import type { EventEnvelope, EventPayload, SessionEvent, SessionState } from "@wakeloop/contracts";
import type { Selectable } from "kysely";
import type { SessionEventsTable, SessionsTable } from "./database";
import { readEventPayload, readSessionState } from "./json-readers";

/** A session row with its projection read back through the SessionState schema. */
export type SessionRow = Omit<Selectable<SessionsTable>, "state"> & { state: SessionState };

export function sessionFromRow(row: Selectable<SessionsTable>): SessionRow {
  return { ...row, state: readSessionState(row.state) };
}

/** The one place an event object is assembled, so appended and read-back events have one key order. */
export function toSessionEvent(envelope: EventEnvelope, payload: EventPayload): SessionEvent {
  return { ...envelope, ...payload };
}

export function eventFromRow(row: Selectable<SessionEventsTable>): SessionEvent {
  return toSessionEvent(
    {
      id: row.id,
      session_id: row.session_id,
      seq: row.seq,
      processed_at: row.processed_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
      wake_id: row.wake_id,
      trace_id: row.trace_id,
    },
    readEventPayload(row.body),
  );
}

/** An event row as `to_jsonb` gives it (times as text), read as `eventFromRow` reads the row. */
export function eventFromJson(row: Record<string, unknown>): SessionEvent {
  const time = (value: unknown) => new Date(String(value));
  return eventFromRow({
    ...(row as unknown as Selectable<SessionEventsTable>),
    created_at: time(row.created_at),
    processed_at: row.processed_at === null ? null : time(row.processed_at),
  });
}
