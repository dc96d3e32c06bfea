import { ListQuery } from "@wakeloop/contracts";
import type { RouteDeps } from "../gateway-deps";
import { defineRoute, type Route } from "../http/route";
import { insertApiKey, listApiKeys, revokeApiKey } from "./api-key-store";

export function apiKeyRoutes({ db, clock }: RouteDeps): Route[] {
  return [
    defineRoute({
      method: "POST",
      path: "/v1/api_keys",
      operationId: "createApiKey",
      summary: "Mint an API key; the secret is in this response only",
      tag: "api_keys",
      access: "owner",
      body: "CreateApiKeyRequest",
      response: { status: 200, body: "CreatedApiKey", description: "The key, with its secret" },
      handler: ({ principal, body }) =>
        insertApiKey(db, { tenantId: principal.tenantId, role: body.role, name: body.name }),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/api_keys",
      operationId: "listApiKeys",
      summary: "List API keys (live ones unless include_archived), newest first; never their secrets",
      tag: "api_keys",
      access: "owner",
      query: ListQuery,
      response: { status: 200, body: "ApiKeyPage", description: "A page of keys" },
      handler: ({ principal, query }) => listApiKeys(db, principal.tenantId, query),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/api_keys/{id}",
      operationId: "revokeApiKey",
      summary: "Revoke an API key at once; the tenant's last owner key cannot be revoked",
      tag: "api_keys",
      access: "owner",
      response: { status: 200, body: "ApiKey", description: "The revoked key" },
      handler: ({ principal, params }) => revokeApiKey(db, principal.tenantId, params.id, clock.now()),
    }),
  ];
}
