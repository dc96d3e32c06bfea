import { ListQuery, WakeloopError } from "@wakeloop/contracts";
import { allowlistEntryProblems } from "@wakeloop/sandbox-client";
import { assertSandboxLimits } from "@wakeloop/service-kit";
import type { RouteDeps } from "../gateway-deps";
import { providedFields } from "../http/provided-fields";
import { defineRoute, type Route } from "../http/route";
import { validateEnvironmentTools } from "../tools/validate-tool-config";
import {
  archiveEnvironment,
  type EnvironmentSpecValue,
  findEnvironment,
  insertEnvironment,
  listEnvironments,
  updateEnvironment,
} from "./environment-store";

export function environmentRoutes({ db, clock, config }: RouteDeps): Route[] {
  // Refused here, when the environment is saved, and again by the runner at ensure (limits can shrink).
  const validate = (spec: EnvironmentSpecValue) => {
    validateEnvironmentTools(spec);
    assertSandboxLimits(spec.config, config.sandboxLimits);
    const problems = allowlistEntryProblems(spec.config.exec_allowlist);
    if (problems.length > 0) {
      throw new WakeloopError("invalid_exec_allowlist", `exec_allowlist: ${problems.join("; ")}`, {
        details: { problems },
      });
    }
  };
  return [
    defineRoute({
      method: "POST",
      path: "/v1/environments",
      operationId: "createEnvironment",
      summary: "Create an environment (sandbox settings and tool policy for sessions)",
      tag: "environments",
      access: "owner",
      body: "CreateEnvironmentRequest",
      response: { status: 200, body: "Environment", description: "The new environment" },
      handler: async ({ principal, body }) => {
        validate(body);
        return insertEnvironment(db, principal.tenantId, body, clock.now());
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/environments",
      operationId: "listEnvironments",
      summary: "List environments, newest first",
      tag: "environments",
      access: "member",
      query: ListQuery,
      response: { status: 200, body: "EnvironmentPage", description: "A page of environments" },
      handler: ({ principal, query }) => listEnvironments(db, principal.tenantId, query),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/environments/{id}",
      operationId: "getEnvironment",
      summary: "Get an environment",
      tag: "environments",
      access: "member",
      response: { status: 200, body: "Environment", description: "The environment" },
      handler: async ({ principal, params }) =>
        (await findEnvironment(db, principal.tenantId, params.id)).environment,
    }),
    defineRoute({
      method: "POST",
      path: "/v1/environments/{id}",
      operationId: "updateEnvironment",
      summary:
        "Update an environment: the given fields replace the current ones for sessions started afterwards",
      tag: "environments",
      access: "owner",
      body: "UpdateEnvironmentRequest",
      response: { status: 200, body: "Environment", description: "The updated environment" },
      handler: ({ principal, params, body, rawBody }) =>
        updateEnvironment(
          db,
          principal.tenantId,
          params.id,
          providedFields(body, rawBody),
          validate,
          clock.now(),
        ),
    }),
    defineRoute({
      method: "POST",
      path: "/v1/environments/{id}/archive",
      operationId: "archiveEnvironment",
      summary: "Archive an environment: it starts no new sessions",
      tag: "environments",
      access: "owner",
      response: { status: 200, body: "Environment", description: "The archived environment" },
      handler: ({ principal, params }) => archiveEnvironment(db, principal.tenantId, params.id, clock.now()),
    }),
  ];
}
