import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// A queued wake is held in Postgres until its tenant has room for another wake in flight (issue #8):
// `published_at` says its job went to JetStream. Wakes queued before this migration were published.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "ALTER TABLE wakes ADD COLUMN published_at timestamptz",
    "UPDATE wakes SET published_at = created_at WHERE status IN ('queued', 'running')",
    "CREATE INDEX wakes_tenant_open_idx ON wakes (tenant_id, due_at) WHERE status IN ('queued', 'running')",
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, ["DROP INDEX wakes_tenant_open_idx", "ALTER TABLE wakes DROP COLUMN published_at"]);
}
