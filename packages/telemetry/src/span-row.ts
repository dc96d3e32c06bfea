import { type Attributes, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { hrTimeToTimeStamp } from "@opentelemetry/core";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { NewSpan, SpanStatusCode as StoredStatusCode } from "@wakeloop/db";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_WAKELOOP_SESSION_ID,
  ATTR_WAKELOOP_TENANT_ID,
  ATTR_WAKELOOP_WAKE_ID,
} from "./attributes";

/** One span event as stored in `spans.events`. */
export interface StoredSpanEvent {
  name: string;
  /** ISO timestamp with nanoseconds, as OTel records it. */
  time: string;
  attributes: Attributes;
}

const KIND_NAMES: Readonly<Record<SpanKind, string>> = {
  [SpanKind.INTERNAL]: "internal",
  [SpanKind.SERVER]: "server",
  [SpanKind.CLIENT]: "client",
  [SpanKind.PRODUCER]: "producer",
  [SpanKind.CONSUMER]: "consumer",
};

const STATUS_NAMES: Readonly<Record<SpanStatusCode, StoredStatusCode>> = {
  [SpanStatusCode.UNSET]: "unset",
  [SpanStatusCode.OK]: "ok",
  [SpanStatusCode.ERROR]: "error",
};

/** The `spans` row for a finished span; the ids we join on are lifted out of the attributes. */
export function toSpanRow(span: ReadableSpan): NewSpan {
  const { traceId, spanId } = span.spanContext();
  const events: StoredSpanEvent[] = span.events.map((event) => ({
    name: event.name,
    time: hrTimeToTimeStamp(event.time),
    attributes: event.attributes ?? {},
  }));
  return {
    trace_id: traceId,
    span_id: spanId,
    parent_span_id: span.parentSpanContext?.spanId ?? null,
    tenant_id: stringAttribute(span.attributes, ATTR_WAKELOOP_TENANT_ID),
    session_id:
      stringAttribute(span.attributes, ATTR_GEN_AI_CONVERSATION_ID) ??
      stringAttribute(span.attributes, ATTR_WAKELOOP_SESSION_ID),
    wake_id: stringAttribute(span.attributes, ATTR_WAKELOOP_WAKE_ID),
    name: span.name,
    kind: KIND_NAMES[span.kind],
    service_name: stringAttribute(span.resource.attributes, ATTR_SERVICE_NAME) ?? "unknown_service",
    // ISO strings keep the sub-millisecond end and event times (Postgres stores microseconds), which a
    // JS Date would truncate.
    start_time: hrTimeToTimeStamp(span.startTime),
    end_time: hrTimeToTimeStamp(span.endTime),
    status_code: STATUS_NAMES[span.status.code],
    status_message: span.status.message ?? null,
    attributes: JSON.stringify(span.attributes),
    events: JSON.stringify(events),
  };
}

function stringAttribute(attributes: Attributes, name: string): string | null {
  const value = attributes[name];
  return typeof value === "string" ? value : null;
}
