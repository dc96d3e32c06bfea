import type { Database } from "@wakeloop/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { authenticate } from "../auth/authenticate";
import type { Principal } from "../auth/principal";
import type { RequestRate } from "../quotas/request-rate";
import { toHttpError } from "./api-error";
import { discardUnreadBody } from "./body-limit";
import type { Route } from "./route";

/** `/v1/agents/{id}` → `/v1/agents/:id`. */
export function fastifyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

const SESSION_PATH = "/v1/sessions/{id}";

/**
 * Registers the routes behind authentication (before the body is read, so a caller without a key
 * learns nothing about their input) and answers every error as an `ApiError`.
 */
export function registerRoutes(
  app: FastifyInstance,
  routes: readonly Route[],
  { db, discardBytes, requestRate }: { db: Kysely<Database>; discardBytes: number; requestRate: RequestRate },
): void {
  const principals = new WeakMap<FastifyRequest, Principal>();

  for (const route of routes) {
    const access = route.access;
    app.route({
      method: route.method,
      url: fastifyPath(route.path),
      onRequest:
        access === "public"
          ? undefined
          : async (request, reply) => {
              const principal = await authenticate(db, request.headers, access);
              // Counted per key once it is known, before the body is read or any work is done.
              await requestRate.take(principal.keyId);
              principals.set(request, principal);
              const params = request.params as Record<string, string | undefined>;
              bindLog(request, reply, {
                tenant_id: principal.tenantId,
                ...(route.path.startsWith(SESSION_PATH) && params.id !== undefined
                  ? { session_id: params.id }
                  : {}),
              });
            },
      handler: async (request, reply) => {
        const body = await route.handle({ request, reply, principal: principals.get(request) ?? null });
        // Streaming routes hijack the reply and answer on the raw response themselves.
        if (reply.sent) return reply;
        return reply.code(route.response.status).send(body);
      },
    });
  }

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({
      error: { type: "not_found_error", message: `no route ${request.method} ${request.url.split("?")[0]}` },
    });
  });

  app.setErrorHandler(async (error, request, reply) => {
    const http = toHttpError(error);
    if (http.serverFault) request.log.error({ err: error }, "request failed");
    else request.log.info({ status: http.status, error_type: http.body.error.type }, http.body.error.message);
    if (http.retryAfterSeconds !== undefined) reply.header("retry-after", String(http.retryAfterSeconds));
    // Refused before its body was read (too large, no key): the client is still writing, and closing
    // under it would reset the connection before it reads this answer. A body dropped only in part
    // leaves the connection unusable for another request.
    if (!(await discardUnreadBody(request.raw, discardBytes))) reply.header("connection", "close");
    return reply.code(http.status).send(http.body);
  });
}

/** Request logs carry the tenant and session ids (DESIGN §9), including the closing "request completed". */
function bindLog(request: FastifyRequest, reply: FastifyReply, ids: Record<string, string>): void {
  request.log = request.log.child(ids);
  reply.log = request.log;
}
