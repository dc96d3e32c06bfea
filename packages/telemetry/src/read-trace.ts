import { type Database, readJson, type SpanRow, type SpanStatusCode } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { z } from "zod";

export type TraceQuery = { tenantId: string } & ({ traceId: string } | { wakeId: string });

export interface TraceSpanEvent {
  name: string;
  time: string;
  attributes: Record<string, unknown>;
}

/** A stored span with its children, ordered by start time. */
export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  serviceName: string;
  tenantId: string | null;
  sessionId: string | null;
  wakeId: string | null;
  startTime: Date;
  endTime: Date;
  durationMs: number;
  status: { code: SpanStatusCode; message: string | null };
  attributes: Record<string, unknown>;
  events: TraceSpanEvent[];
  children: TraceSpan[];
}

// JSON read back from the database is validated like any other boundary (DESIGN invariant 8).
const StoredAttributes = z.record(z.string(), z.unknown());
const StoredEvents = z.array(z.object({ name: z.string(), time: z.string(), attributes: StoredAttributes }));

/**
 * The span trees of one trace, or of every trace of one wake (a wake re-run after a crash starts a new
 * trace). Spans written by the sandbox and memory services carry no tenant, so tenancy is decided per
 * trace: a trace is the tenant's when one of its spans is, and then all of its spans are returned.
 * Returns the roots; a span whose parent was never persisted is a root too. Empty when nothing matches.
 */
export async function readTrace(db: Kysely<Database>, query: TraceQuery): Promise<TraceSpan[]> {
  const ownedTraces = db
    .selectFrom("spans")
    .select("trace_id")
    .where("tenant_id", "=", query.tenantId)
    .where((eb) =>
      "traceId" in query ? eb("trace_id", "=", query.traceId) : eb("wake_id", "=", query.wakeId),
    );
  const rows = await db
    .selectFrom("spans")
    .selectAll()
    .where("trace_id", "in", ownedTraces)
    // OTel takes start times from Date.now(), so spans started within one millisecond keep no order.
    .orderBy("start_time")
    .orderBy("span_id")
    .execute();
  return buildTree(rows.map(toTraceSpan));
}

function buildTree(spans: TraceSpan[]): TraceSpan[] {
  const byId = new Map(spans.map((span) => [`${span.traceId}/${span.spanId}`, span]));
  const roots: TraceSpan[] = [];
  for (const span of spans) {
    const parent = span.parentSpanId === null ? undefined : byId.get(`${span.traceId}/${span.parentSpanId}`);
    if (parent === undefined) roots.push(span);
    else parent.children.push(span);
  }
  return roots;
}

function toTraceSpan(row: SpanRow): TraceSpan {
  return {
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    name: row.name,
    kind: row.kind,
    serviceName: row.service_name,
    tenantId: row.tenant_id,
    sessionId: row.session_id,
    wakeId: row.wake_id,
    startTime: row.start_time,
    endTime: row.end_time,
    durationMs: row.end_time.getTime() - row.start_time.getTime(),
    status: { code: row.status_code, message: row.status_message },
    attributes: readJson(StoredAttributes, row.attributes, "span attributes"),
    events: readJson(StoredEvents, row.events, "span events"),
    children: [],
  };
}
