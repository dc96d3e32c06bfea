import { GetUiComponentQuery, WakeloopError } from "@wakeloop/contracts";
import { readAgentCode, readAgentCodeVersion } from "@wakeloop/db";
import type { RouteDeps } from "../gateway-deps";
import { defineRoute, type Route } from "../http/route";
import { findAgent } from "./agent-store";

/**
 * What a client needs to render a `component` block of `agent.ui_blocks` or of a `render_and_wait`
 * call: the stored component's code, at the version the block names (the current one when it names
 * none). Components are written by the agent's own tools (create_ui_component), never through the API.
 */
export function uiComponentRoutes({ db }: RouteDeps): Route[] {
  return [
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/ui_components/{name}",
      operationId: "getUiComponent",
      summary: "A UI component the agent stored, at its current version or the version given",
      tag: "agents",
      access: "member",
      query: GetUiComponentQuery,
      response: { status: 200, body: "UiComponent", description: "The component's code and props schema" },
      handler: async ({ principal, params, query }) => {
        const scope = { tenantId: principal.tenantId, agentId: params.id };
        await findAgent(db, scope.tenantId, scope.agentId);
        const item =
          query.version === undefined
            ? await readAgentCode(db, scope, "ui_component", params.name)
            : await readAgentCodeVersion(db, scope, "ui_component", params.name, query.version);
        if (item === null) {
          throw new WakeloopError(
            "ui_component_not_found",
            `the agent has no UI component "${params.name}"${query.version === undefined ? "" : ` at version ${query.version}`}`,
          );
        }
        const { name, description, code, schema, version } = item;
        return { name, description, code, props_schema: schema, version };
      },
    }),
  ];
}
