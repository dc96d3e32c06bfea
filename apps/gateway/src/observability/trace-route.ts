import { TraceQuery } from "@wakeloop/contracts";
import { listSessionWakes } from "@wakeloop/db";
import { readTrace } from "@wakeloop/telemetry";
import type { RouteDeps } from "../gateway-deps";
import { notFound } from "../http/api-error";
import { defineRoute, type Route } from "../http/route";
import { requireSession } from "../sessions/session-store";
import { toTraceSpanView } from "./trace-view";

export function traceRoute({ db }: RouteDeps): Route {
  return defineRoute({
    method: "GET",
    path: "/v1/sessions/{id}/trace",
    operationId: "getSessionTrace",
    summary: "The spans of one wake of the session, or of its most recent wakes, from Postgres",
    tag: "sessions",
    access: "member",
    query: TraceQuery,
    response: { status: 200, body: "TraceResponse", description: "Span trees per wake, oldest wake first" },
    handler: async ({ principal, params, query }) => {
      const tenantId = principal.tenantId;
      await requireSession(db, tenantId, params.id);
      const wakes = await listSessionWakes(db, {
        tenantId,
        sessionId: params.id,
        limit: query.limit,
        ...(query.wake_id !== undefined && { wakeId: query.wake_id }),
      });
      const rows = wakes.reverse();
      if (query.wake_id !== undefined && rows.length === 0)
        throw notFound("wake of this session", query.wake_id);
      const data = await Promise.all(
        rows.map(async ({ id }) => ({
          wake_id: id,
          spans: (await readTrace(db, { tenantId, wakeId: id })).map(toTraceSpanView),
        })),
      );
      return { data };
    },
  });
}
