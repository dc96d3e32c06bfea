import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

// A queued wake is held in Postgres until its tenant has room for another wake in flight (issue #8):
// `published_at` says its job went to JetStream. Wakes queued before this migration were published.
// The sweeper's stale-wake scan now only republishes published wakes (held ones are not lost, they
// wait), and the periodic dispatch pass learns which tenants hold wakes through a definer function,
// since that scan crosses tenants.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "ALTER TABLE wakes ADD COLUMN published_at timestamptz",
    "UPDATE wakes SET published_at = created_at WHERE status IN ('queued', 'running')",
    "CREATE INDEX wakes_tenant_open_idx ON wakes (tenant_id, due_at) WHERE status IN ('queued', 'running')",
    `CREATE OR REPLACE FUNCTION wl_stale_queued_wakes(before timestamptz, max_rows integer)
      RETURNS TABLE (id text, tenant_id text, session_id text, attempt integer, reason text)
      LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT w.id, w.tenant_id, w.session_id, w.attempt, w.reason FROM wakes w
      WHERE w.status = 'queued' AND w.published_at IS NOT NULL AND w.due_at < $1 ORDER BY w.due_at LIMIT $2
    $$`,
    `CREATE FUNCTION wl_tenants_with_held_wakes(max_rows integer) RETURNS TABLE (tenant_id text)
      LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT DISTINCT w.tenant_id FROM wakes w
      WHERE w.status = 'queued' AND w.published_at IS NULL LIMIT $1
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_tenants_with_held_wakes(integer) FROM PUBLIC",
  ]);
}
