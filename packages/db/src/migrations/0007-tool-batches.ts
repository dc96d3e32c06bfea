import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// The batch plan of each model response is stored with its calls (DESIGN §5), so a replay or an
// investigation sees exactly which calls ran together and which were rejected, and why.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE tool_batches (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      session_id text NOT NULL REFERENCES sessions (id),
      wake_id text NOT NULL REFERENCES wakes (id),
      plan jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    "CREATE INDEX tool_batches_session_idx ON tool_batches (session_id, created_at)",
    "ALTER TABLE tool_calls ADD COLUMN batch_id text REFERENCES tool_batches (id)",
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, ["ALTER TABLE tool_calls DROP COLUMN batch_id", "DROP TABLE tool_batches"]);
}
