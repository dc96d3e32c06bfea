import { ListEventsQuery } from "@wakeloop/contracts";
import { idleDescendants, readEvents } from "@wakeloop/db";
import type { RouteDeps } from "../gateway-deps";
import { defineRoute, type Route } from "../http/route";
import { requireSession } from "../sessions/session-store";
import { signalWorker } from "../sessions/signal-worker";
import { idempotencyClaim } from "./idempotency";
import { postUserEvents } from "./post-user-events";
import { publishWakeJobs } from "./publish-committed";

export function eventRoutes({ db, bus, clock, config }: RouteDeps): Route[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/sessions/{id}/events",
      operationId: "postEvents",
      summary: "Append user events to a session, as one batch",
      tag: "events",
      access: "member",
      body: "PostEventsRequest",
      headers: [
        {
          name: "Idempotency-Key",
          description: "Repeats with the same key and body get the first response; with another body a 409",
        },
      ],
      response: {
        status: 202,
        body: "PostEventsResponse",
        description: "The committed events, with ids and seqs",
      },
      handler: async ({ principal, params, body, request, reply, log }) => {
        const claim = idempotencyClaim(request.headers["idempotency-key"], {
          method: "POST",
          path: `/v1/sessions/${params.id}/events`,
          body,
        });
        const result = await postUserEvents(db, {
          tenantId: principal.tenantId,
          sessionId: params.id,
          events: body.events,
          idempotency: claim,
          now: clock.now(),
          maxWakesInFlight: config.quotas.wakesInFlightPerTenant,
        });
        if (result.replayed) reply.header("idempotent-replayed", "true");
        else {
          publishWakeJobs(bus, result.wakeJobs, log);
          signalWorker(bus, result.events, log);
        }
        return { events: result.events };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/sessions/{id}/events",
      operationId: "listEvents",
      summary: "Read a session's events in seq order, after a seq",
      tag: "events",
      access: "member",
      query: ListEventsQuery,
      response: { status: 200, body: "ListEventsResponse", description: "A page of events" },
      handler: async ({ principal, params, query }) => {
        await requireSession(db, principal.tenantId, params.id);
        const events = await readEvents(db, {
          tenantId: principal.tenantId,
          sessionId: params.id,
          afterSeq: query.after_seq,
          limit: query.limit + 1,
        });
        const page = events.slice(0, query.limit);
        return {
          data: page,
          next_after_seq: events.length > query.limit ? (page.at(-1)?.seq ?? null) : null,
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/sessions/{id}/pending",
      operationId: "listPending",
      summary:
        "The confirmations and custom tool results the session waits on, and its sub-sessions' confirmations",
      tag: "events",
      access: "member",
      response: {
        status: 200,
        body: "PendingResponse",
        description: "Open actions, in the order they were asked",
      },
      handler: async ({ principal, params }) => {
        const session = await requireSession(db, principal.tenantId, params.id);
        // A sub-session's approvals surface here too, so one person answers them from the parent.
        const target = { tenantId: principal.tenantId, sessionId: params.id };
        const children = await idleDescendants(db, target, { lock: false });
        const approvals = children.flatMap((child) =>
          child.state.pending_actions
            .filter((action) => action.kind === "tool_confirmation")
            .map((action) => ({ ...action, session_id: child.sessionId })),
        );
        return { data: [...session.state.pending_actions, ...approvals] };
      },
    }),
  ];
}
