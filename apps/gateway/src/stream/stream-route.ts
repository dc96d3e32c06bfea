import { StreamEventsQuery, WakeloopError } from "@wakeloop/contracts";
import { z } from "zod";
import { isKeyLive } from "../api-keys/api-key-store";
import type { RouteDeps } from "../gateway-deps";
import { parseInput } from "../http/parse-input";
import { defineRoute, type Route } from "../http/route";
import { requireSession } from "../sessions/session-store";
import { type EventSink, runSessionEventStream } from "./session-event-stream";
import { openSseResponse, type SseResponse } from "./sse-response";

const LastEventId = z.coerce.number().int().nonnegative().optional();

export function streamRoute({ db, bus, config, shutdown, streamSlots }: RouteDeps): Route {
  return defineRoute({
    method: "GET",
    path: "/v1/sessions/{id}/events/stream",
    operationId: "streamEvents",
    summary: "Stream a session's events (Server-Sent Events): history after a seq, then live",
    tag: "events",
    access: "member",
    query: StreamEventsQuery,
    headers: [{ name: "Last-Event-ID", description: "Resume after this seq (sent by reconnecting clients)" }],
    response: {
      status: 200,
      body: "event-stream",
      description:
        "`id:` is the event's seq, `event:` its type, `data:` the SessionEvent JSON; comments keep it alive. " +
        "With `deltas=true`, the model's live deltas (`agent.message_delta`, `agent.tool_use_input_delta`: " +
        "`ephemeral: true`, no `id:`, never stored) come in between",
    },
    handler: async ({ principal, params, query, request, reply, log }) => {
      await requireSession(db, principal.tenantId, params.id);
      // A reconnect resends the original URL and adds Last-Event-ID, which is the more recent of the two.
      const lastEventId = parseInput(LastEventId, request.headers["last-event-id"], "Last-Event-ID header");
      const afterSeq = lastEventId ?? query.after_seq;
      const release = streamSlots.acquire(principal.keyId);

      const clientGone = new AbortController();
      reply.raw.once("close", () => clientGone.abort());
      const signal = AbortSignal.any([clientGone.signal, shutdown]);
      let sse: SseResponse | undefined;
      const open = async (): Promise<EventSink> => {
        // From here on the response is ours: a 200 means the live subscription is in place.
        reply.hijack();
        const response = openSseResponse(reply.raw, signal);
        sse = response;
        await response.comment("stream open");
        log.info({ after_seq: afterSeq }, "event stream opened");
        return {
          send: response.event,
          sendDelta: (delta) => {
            if (!response.delta(delta))
              log.debug({ wake_id: delta.wake_id }, "a live delta dropped: the client is behind");
          },
          // A stream outlives the request that authenticated it: every keep-alive asks Postgres
          // again, so a revoked key's streams end within one keep-alive interval on every replica.
          keepAlive: async () => {
            if (!(await isKeyLive(db, principal.tenantId, principal.keyId))) {
              throw new WakeloopError("unauthenticated", "the API key was revoked");
            }
            await response.comment("keep-alive");
          },
        };
      };
      try {
        await runSessionEventStream({
          db,
          bus,
          tenantId: principal.tenantId,
          sessionId: params.id,
          afterSeq,
          deltas: query.deltas,
          keepAliveMs: config.sseKeepAliveMs,
          open,
          signal,
        });
      } catch (error) {
        // Before the stream opened, the error handler answers; after, the client reconnects with
        // Last-Event-ID and misses nothing, so the cause is only for operators.
        if (sse === undefined) throw error;
        if (error instanceof WakeloopError && error.code === "unauthenticated") {
          log.info({ key_id: principal.keyId }, "event stream ended: its API key was revoked");
        } else if (!signal.aborted) log.warn({ err: error }, "event stream ended by an error");
      } finally {
        release();
        if (sse !== undefined) {
          sse.end();
          log.info({ client_gone: clientGone.signal.aborted }, "event stream closed");
        }
      }
    },
  });
}
