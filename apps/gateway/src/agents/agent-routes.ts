import { AgentVersionDiffQuery, GetAgentQuery, ListAgentVersionsQuery, ListQuery } from "@wakeloop/contracts";
import type { RouteDeps } from "../gateway-deps";
import { providedFields } from "../http/provided-fields";
import { defineRoute, type Route } from "../http/route";
import { defaultBudget, requireWithinCap } from "../quotas/budget-policy";
import { diffAgentVersions } from "./agent-diff";
import {
  archiveAgent,
  findAgent,
  insertAgent,
  listAgents,
  listAgentVersions,
  rollbackAgent,
  updateAgent,
} from "./agent-store";
import { agentValidator } from "./validate-agent";

export function agentRoutes({ db, agentSql, clock, config }: RouteDeps): Route[] {
  const validateAgent = agentValidator(config.models);
  const limits = config.quotas.budgets;
  return [
    defineRoute({
      method: "POST",
      path: "/v1/agents",
      operationId: "createAgent",
      summary: "Create an agent; its spec becomes version 1",
      tag: "agents",
      access: "owner",
      body: "CreateAgentRequest",
      response: { status: 200, body: "Agent", description: "The new agent" },
      handler: async ({ principal, body, rawBody }) => {
        validateAgent(body);
        // The schema fills in an unlimited budget when none is given; the operator's default applies.
        const given = providedFields(body, rawBody).budget;
        const budget = given === undefined ? defaultBudget(limits) : requireWithinCap(given, limits);
        return insertAgent(db, principal.tenantId, { ...body, budget }, clock.now());
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents",
      operationId: "listAgents",
      summary: "List agents (latest versions), newest first",
      tag: "agents",
      access: "member",
      query: ListQuery,
      response: { status: 200, body: "AgentPage", description: "A page of agents" },
      handler: ({ principal, query }) => listAgents(db, principal.tenantId, query),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}",
      operationId: "getAgent",
      summary: "Get an agent's latest version, or the version given",
      tag: "agents",
      access: "member",
      query: GetAgentQuery,
      response: { status: 200, body: "Agent", description: "The agent" },
      handler: async ({ principal, params, query }) =>
        (await findAgent(db, principal.tenantId, params.id, query.version)).agent,
    }),
    defineRoute({
      method: "POST",
      path: "/v1/agents/{id}",
      operationId: "updateAgent",
      summary: "Update an agent: the given fields over the latest spec make a new immutable version",
      tag: "agents",
      access: "owner",
      body: "UpdateAgentRequest",
      response: {
        status: 200,
        body: "Agent",
        description: "The new version (the latest one when the update changed nothing)",
      },
      handler: ({ principal, params, body, rawBody }) => {
        const patch = providedFields(body, rawBody);
        if (patch.budget !== undefined) requireWithinCap(patch.budget, limits);
        return updateAgent(db, principal.tenantId, params.id, patch, validateAgent, clock.now());
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/versions",
      operationId: "listAgentVersions",
      summary: "List an agent's versions, oldest first",
      tag: "agents",
      access: "member",
      query: ListAgentVersionsQuery,
      response: { status: 200, body: "AgentVersionPage", description: "A page of versions" },
      handler: ({ principal, params, query }) => listAgentVersions(db, principal.tenantId, params.id, query),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/versions/diff",
      operationId: "diffAgentVersions",
      summary: "Compare two versions: a unified diff of the system prompt and the other fields that changed",
      tag: "agents",
      access: "member",
      query: AgentVersionDiffQuery,
      response: {
        status: 200,
        body: "AgentVersionDiff",
        description: "What changed from one version to the other",
      },
      handler: async ({ principal, params, query }) => {
        const to = (await findAgent(db, principal.tenantId, params.id, query.to)).agent;
        const fromVersion = query.from ?? Math.max(1, to.version - 1);
        const from = (await findAgent(db, principal.tenantId, params.id, fromVersion)).agent;
        return diffAgentVersions(from, to);
      },
    }),
    defineRoute({
      method: "POST",
      path: "/v1/agents/{id}/rollback",
      operationId: "rollbackAgent",
      summary:
        "Roll back to an earlier version: its spec becomes a new latest version (history keeps every version)",
      tag: "agents",
      access: "owner",
      body: "RollbackAgentRequest",
      response: {
        status: 200,
        body: "Agent",
        description: "The new latest version (the latest one when it already has that version's spec)",
      },
      handler: ({ principal, params, body }) =>
        rollbackAgent(
          db,
          principal.tenantId,
          params.id,
          { version: body.version, applyToSessions: body.apply_to_sessions },
          validateAgent,
          clock.now(),
        ),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/agents/{id}/archive",
      operationId: "archiveAgent",
      summary: "Archive an agent: it starts no new sessions; running sessions keep their version",
      tag: "agents",
      access: "owner",
      response: { status: 200, body: "Agent", description: "The archived agent" },
      handler: async ({ principal, params }) =>
        archiveAgent(db, agentSql, principal.tenantId, params.id, clock.now()),
    }),
  ];
}
