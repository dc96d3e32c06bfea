import type { TraceSpanView } from "@wakeloop/contracts";
import type { TraceSpan } from "@wakeloop/telemetry";

/** A stored span tree in the API's snake_case shape. */
export function toTraceSpanView(span: TraceSpan): TraceSpanView {
  return {
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    service_name: span.serviceName,
    wake_id: span.wakeId,
    start_time: span.startTime.toISOString(),
    end_time: span.endTime.toISOString(),
    duration_ms: span.durationMs,
    status: span.status,
    attributes: span.attributes,
    events: span.events,
    children: span.children.map(toTraceSpanView),
  };
}
