import { VaultSecretName } from "@wakeloop/contracts";
import {
  CredentialCipher,
  deleteVaultSecret,
  listVaultSecrets,
  putVaultSecret,
} from "@wakeloop/provider-credentials";
import type { RouteDeps } from "../gateway-deps";
import { parseInput } from "../http/parse-input";
import { defineRoute, type Route } from "../http/route";

/**
 * The tenant's vault of MCP credentials (docs/mcp.md): owners write and delete secrets; nothing reads a
 * value back. Requests carrying a value are logged without their body (fastify logs method and url).
 */
export function vaultRoutes({ db, clock, config }: RouteDeps): Route[] {
  const cipher = new CredentialCipher(config.credentialKeys);
  const name = (value: string) => parseInput(VaultSecretName, value, "name");
  return [
    defineRoute({
      method: "PUT",
      path: "/v1/vault/secrets/{name}",
      operationId: "putVaultSecret",
      summary: "Store (or replace) a secret MCP server specs can reference; its value is never returned",
      tag: "vault",
      access: "owner",
      body: "PutVaultSecretRequest",
      response: { status: 200, body: "VaultSecret", description: "The stored secret's metadata" },
      handler: ({ principal, params, body }) =>
        putVaultSecret(
          db,
          cipher,
          { tenantId: principal.tenantId, name: name(params.name), value: body.value },
          clock.now(),
        ),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/vault/secrets",
      operationId: "listVaultSecrets",
      summary: "List the names of the tenant's vault secrets; never their values",
      tag: "vault",
      access: "member",
      response: { status: 200, body: "VaultSecretList", description: "The stored secrets" },
      handler: async ({ principal }) => ({ data: await listVaultSecrets(db, principal.tenantId) }),
    }),
    defineRoute({
      method: "DELETE",
      path: "/v1/vault/secrets/{name}",
      operationId: "deleteVaultSecret",
      summary:
        "Delete a vault secret; MCP servers that reference it become unreachable until it is stored again",
      tag: "vault",
      access: "owner",
      response: { status: 200, body: "VaultSecret", description: "The deleted secret's metadata" },
      handler: ({ principal, params }) => deleteVaultSecret(db, principal.tenantId, name(params.name)),
    }),
  ];
}
