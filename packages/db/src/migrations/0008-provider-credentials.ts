import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/**
 * Tenants' own model provider keys, encrypted by the services (AES-256-GCM); `key_id` names the
 * operator key that sealed the value, so keys can rotate while old rows stay readable.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE provider_credentials (
      tenant_id text NOT NULL REFERENCES tenants (id),
      provider text NOT NULL CHECK (provider IN ('anthropic', 'openai', 'openai_compatible')),
      key_id text NOT NULL,
      sealed bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, provider)
    )`,
  ]);
}
