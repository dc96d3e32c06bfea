import { type Database, readJson, type SpanRow, type SpanStatusCode, withTenant } from "@wakeloop/db";
import { type Kysely, sql } from "kysely";
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
  const traceId = "traceId" in query ? query.traceId : null;
  const wakeId = "wakeId" in query ? query.wakeId : null;
  // Row security hides the tenantless spans, so the definer function decides ownership as above, for
  // the tenant this transaction is scoped to.
  const { rows } = await withTenant(db, query.tenantId, (trx) =>
    sql<SpanRow>`
      SELECT * FROM wl_tenant_trace_spans(${traceId}, ${wakeId})
      -- OTel takes start times from Date.now(), so spans started within one millisecond keep no order.
      ORDER BY start_time, span_id`.execute(trx),
  );
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
