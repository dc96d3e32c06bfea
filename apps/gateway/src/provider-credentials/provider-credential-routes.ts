import { CredentialProvider } from "@wakeloop/contracts";
import {
  CredentialCipher,
  deleteProviderCredential,
  listProviderCredentials,
  putProviderCredential,
} from "@wakeloop/provider-credentials";
import type { RouteDeps } from "../gateway-deps";
import { parseInput } from "../http/parse-input";
import { defineRoute, type Route } from "../http/route";

/**
 * A tenant's own provider keys: owners write and delete them; nothing ever reads one back. Requests
 * carrying a key are logged without their body (fastify logs method and url only).
 */
export function providerCredentialRoutes({ db, clock, config }: RouteDeps): Route[] {
  const cipher = new CredentialCipher(config.credentialKeys);
  const provider = (value: string) => parseInput(CredentialProvider, value, "provider");
  return [
    defineRoute({
      method: "PUT",
      path: "/v1/provider_credentials/{provider}",
      operationId: "putProviderCredential",
      summary: "Store (or replace) the tenant's own key for a model provider; it is never returned",
      tag: "provider_credentials",
      access: "owner",
      body: "PutProviderCredentialRequest",
      response: { status: 200, body: "ProviderCredential", description: "The stored credential's metadata" },
      handler: ({ principal, params, body }) =>
        putProviderCredential(
          db,
          cipher,
          { tenantId: principal.tenantId, provider: provider(params.provider), apiKey: body.api_key },
          clock.now(),
        ),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/provider_credentials",
      operationId: "listProviderCredentials",
      summary: "List the providers the tenant stored a key for; metadata only, never the keys",
      tag: "provider_credentials",
      access: "owner",
      response: { status: 200, body: "ProviderCredentialList", description: "The stored credentials" },
      handler: async ({ principal }) => ({ data: await listProviderCredentials(db, principal.tenantId) }),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/provider_credentials/{provider}",
      operationId: "deleteProviderCredential",
      summary: "Delete the tenant's key for a provider; its agents fall back to the platform's rules",
      tag: "provider_credentials",
      access: "owner",
      response: { status: 200, body: "ProviderCredential", description: "The deleted credential's metadata" },
      handler: ({ principal, params }) =>
        deleteProviderCredential(db, principal.tenantId, provider(params.provider)),
    }),
  ];
}
