import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE agent_state (
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL REFERENCES agents (id),
      key text NOT NULL,
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, agent_id, key)
    )`,
    `CREATE TABLE idempotency_keys (
      tenant_id text NOT NULL REFERENCES tenants (id),
      key text NOT NULL,
      request_hash text NOT NULL,
      status_code integer NOT NULL,
      response jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, key)
    )`,
    "CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)",
  ]);
}
