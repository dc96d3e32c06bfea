import { type CreateSessionRequest, ListSessionsQuery, WakeloopError } from "@wakeloop/contracts";
import { createSession, withTenant } from "@wakeloop/db";
import type { z } from "zod";
import { findAgent } from "../agents/agent-store";
import type { Principal } from "../auth/principal";
import { findEnvironment } from "../environments/environment-store";
import type { RouteDeps } from "../gateway-deps";
import { defineRoute, type Route } from "../http/route";
import { capInherited, requireOwnerForBudget, requireWithinCap } from "../quotas/budget-policy";
import { requireRoomForSession } from "../quotas/open-sessions";
import { archiveSession, updateSession } from "./session-commands";
import { listSessions, requireSession } from "./session-store";
import { toSession } from "./session-view";
import { signalWorker } from "./signal-worker";

export function sessionRoutes(deps: RouteDeps): Route[] {
  const { db, clock } = deps;
  return [
    defineRoute({
      method: "POST",
      path: "/v1/sessions",
      operationId: "createSession",
      summary: "Start a session pinned to an agent version (the latest unless given)",
      tag: "sessions",
      access: "member",
      body: "CreateSessionRequest",
      response: { status: 200, body: "Session", description: "The new idle session" },
      handler: ({ principal, body }) => startSession(deps, principal, body),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/sessions",
      operationId: "listSessions",
      summary: "List sessions, newest first, filtered by status, agent or parent",
      tag: "sessions",
      access: "member",
      query: ListSessionsQuery,
      response: { status: 200, body: "SessionPage", description: "A page of sessions" },
      handler: ({ principal, query }) => listSessions(db, principal.tenantId, query),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/sessions/{id}",
      operationId: "getSession",
      summary: "Get a session: status, stop reason, usage and budget",
      tag: "sessions",
      access: "member",
      response: { status: 200, body: "Session", description: "The session" },
      handler: async ({ principal, params }) =>
        toSession(await requireSession(db, principal.tenantId, params.id)),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/sessions/{id}",
      operationId: "updateSession",
      summary: "Change a session's title, metadata or budget (appended as a session.updated event)",
      tag: "sessions",
      access: "member",
      body: "UpdateSessionRequest",
      response: { status: 200, body: "Session", description: "The updated session" },
      handler: async ({ principal, params, body }) => {
        if (body.budget !== undefined) {
          requireOwnerForBudget(principal.role);
          requireWithinCap(body.budget, deps.config.quotas.budgets);
        }
        return toSession(await updateSession(db, principal.tenantId, params.id, body, clock.now()));
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/sessions/{id}/archive",
      operationId: "archiveSession",
      summary: "Archive a session (terminated with reason archived); archiving again changes nothing",
      tag: "sessions",
      access: "member",
      response: { status: 200, body: "Session", description: "The archived session" },
      handler: async ({ principal, params, log }) => {
        const { session, terminated } = await archiveSession(db, principal.tenantId, params.id, clock.now());
        signalWorker(deps.bus, terminated, log);
        return toSession(session);
      },
    }),
  ];
}

async function startSession(
  { db, clock, config }: RouteDeps,
  principal: Principal,
  body: z.output<typeof CreateSessionRequest>,
) {
  const tenantId = principal.tenantId;
  const limits = config.quotas.budgets;
  if (body.budget !== undefined) {
    requireOwnerForBudget(principal.role);
    requireWithinCap(body.budget, limits);
  }
  const ref = typeof body.agent === "string" ? { id: body.agent, version: undefined } : body.agent;
  const { agent, archived } = await findAgent(db, tenantId, ref.id, ref.version);
  if (archived) {
    throw new WakeloopError("agent_archived", `agent ${agent.id} is archived; it starts no new sessions`, {
      details: { id: agent.id },
    });
  }
  if (body.environment_id !== undefined) {
    const environment = await findEnvironment(db, tenantId, body.environment_id);
    if (environment.archived) {
      throw new WakeloopError("environment_archived", `environment ${body.environment_id} is archived`, {
        details: { id: body.environment_id },
      });
    }
  }
  const row = await withTenant(db, tenantId, async (trx) => {
    await requireRoomForSession(trx, tenantId, config.quotas.openSessionsPerTenant);
    return createSession(trx, {
      tenantId,
      agentId: agent.id,
      agentVersion: agent.version,
      environmentId: body.environment_id ?? null,
      parentSessionId: null,
      title: body.title ?? null,
      metadata: body.metadata,
      budget: body.budget ?? capInherited(agent.budget, limits),
      now: clock.now(),
    });
  });
  return toSession(row);
}
