import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// The per-tenant vault (issue #12): named secrets MCP server specs reference for their headers. Sealed
// by the services like provider keys (AES-256-GCM under the operator's PROVIDER_CREDENTIAL_KEYS, bound
// to the tenant and name), so the database and its backups never hold a value in clear.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE vault_secrets (
      tenant_id text NOT NULL REFERENCES tenants (id),
      name text NOT NULL CHECK (name ~ '^[A-Za-z][A-Za-z0-9_.-]{0,63}$'),
      key_id text NOT NULL,
      sealed bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, name)
    )`,
    "SELECT wl_isolate_tenant_table('vault_secrets')",
  ]);
}
