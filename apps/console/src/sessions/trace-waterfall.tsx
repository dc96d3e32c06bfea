import type { TraceSpanView } from "@wakeloop/contracts";
import { useEffect, useRef } from "react";
import { DataTable } from "../data-table";
import { ErrorNote, useLoad } from "../ui";
import type { SessionPartProps } from "./session-part";

const SPAN_RETRIES = 10;

const WATERFALL_COLUMNS = [
  { label: "Span" },
  { label: "Service", className: "service" },
  { label: "Duration" },
  { label: "Tokens" },
  { label: "Timeline", className: "bar-col" },
];

interface Row {
  span: TraceSpanView;
  depth: number;
}

/** Parents before children, children by start time: the order a waterfall reads in. */
function flatten(spans: readonly TraceSpanView[], depth = 0): Row[] {
  return [...spans]
    .sort((a, b) => a.start_time.localeCompare(b.start_time))
    .flatMap((span) => [{ span, depth }, ...flatten(span.children, depth + 1)]);
}

const tokensOf = (span: TraceSpanView): string | null => {
  const input = span.attributes["gen_ai.usage.input_tokens"];
  const output = span.attributes["gen_ai.usage.output_tokens"];
  return typeof input === "number" || typeof output === "number"
    ? `${input ?? 0} in / ${output ?? 0} out`
    : null;
};

/** Each wake of the session as a waterfall of its spans: model calls, tool calls, their durations. */
export function TraceWaterfall({ client, sessionId, refreshKey }: SessionPartProps) {
  const trace = useLoad(
    () => client.sessions.trace(sessionId, { limit: 10 }),
    [client, sessionId, refreshKey],
  );
  // A wake's spans are stored by the worker's exporter shortly after the wake's events: a wake seen
  // without spans is asked for again, a few times.
  const retries = useRef({ refreshKey, count: 0 });
  const { data, reload } = trace;
  useEffect(() => {
    if (retries.current.refreshKey !== refreshKey) retries.current = { refreshKey, count: 0 };
    const incomplete = data?.data.some((wake) => wake.spans.length === 0) ?? false;
    if (!incomplete || retries.current.count >= SPAN_RETRIES) return;
    retries.current.count += 1;
    const timer = setTimeout(reload, 1_000);
    return () => clearTimeout(timer);
  }, [data, reload, refreshKey]);
  return (
    <section aria-labelledby="trace-heading" className="panel">
      <h2 id="trace-heading">Trace</h2>
      <button type="button" className="secondary" onClick={reload}>
        Refresh trace
      </button>
      <ErrorNote error={trace.error} />
      {trace.data?.data.length === 0 && <p>No wake has run yet.</p>}
      {trace.data?.data.map((wake) => {
        if (wake.spans.length === 0) {
          return <p key={wake.wake_id}>Wake {wake.wake_id}: no spans recorded yet.</p>;
        }
        const rows = flatten(wake.spans);
        const start = Math.min(...rows.map((row) => Date.parse(row.span.start_time)));
        const end = Math.max(...rows.map((row) => Date.parse(row.span.end_time)));
        const total = Math.max(end - start, 1);
        return (
          <DataTable
            key={wake.wake_id}
            className="waterfall"
            visibleCaption
            caption={`Wake ${wake.wake_id} — ${end - start} ms`}
            columns={WATERFALL_COLUMNS}
          >
            {rows.map(({ span, depth }) => (
              <tr key={span.span_id} className={span.status.code === "error" ? "is-error" : undefined}>
                <th scope="row" style={{ paddingLeft: `${0.5 + depth}rem` }}>
                  {span.name}
                  {span.status.code === "error" && ` (error: ${span.status.message ?? "unknown"})`}
                </th>
                <td className="service">{span.service_name}</td>
                <td>{span.duration_ms.toFixed(1)} ms</td>
                <td>{tokensOf(span) ?? ""}</td>
                <td className="bar-col" aria-hidden="true">
                  <div
                    className="bar"
                    style={{
                      marginLeft: `${((Date.parse(span.start_time) - start) / total) * 100}%`,
                      width: `${Math.max((span.duration_ms / total) * 100, 0.5)}%`,
                    }}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        );
      })}
    </section>
  );
}
