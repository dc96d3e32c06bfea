import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/*
 * Tenant isolation enforced by Postgres (invariant 9), not only by the `WHERE tenant_id = …` of each
 * query. Services connect as a role that owns nothing and cannot bypass row security (see app-role.ts);
 * every query runs in a transaction that first sets `wakeloop.tenant_id` (see tenant-scope.ts).
 *
 * - Every table with a `tenant_id` column gets row-level security, FORCED (so a non-superuser owner is
 *   bound too), with one policy keyed by the transaction's tenant setting. The loop runs over the
 *   catalog, so tables added before this migration by other work are covered; tables created later call
 *   `wl_isolate_tenant_table` (a test fails for a tenant table without a policy).
 * - Foreign keys between tenant tables include `tenant_id`, so a row can never point at another
 *   tenant's row: referential checks bypass row security, so only the key itself can refuse that.
 * - The outbox gets a tenant column too: its rows are whole events, as private as `session_events`.
 * - What is tenant-blind by nature (finding a key's tenant, the sweeper's scans, the outbox relay,
 *   expiring idempotency keys, writing span batches, reading a trace with the spans of services that
 *   do not know the tenant) goes through narrow SECURITY DEFINER functions with a fixed search_path,
 *   executable only by roles the migrate CLI grants.
 */

const TENANT = "current_setting('wakeloop.tenant_id', true)";

// A definer function runs with its owner's rights, so it must not resolve names through the caller's
// search_path (a caller could shadow `wakes` with its own temporary table).
const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

/** [table, columns, referenced table, referenced columns, replaced single-tenant constraint, deferrable] */
const TENANT_KEYS: ReadonlyArray<readonly [string, string, string, string, string, boolean?]> = [
  ["agent_versions", "tenant_id, agent_id", "agents", "tenant_id, id", "agent_versions_agent_id_fkey"],
  [
    "sessions",
    "tenant_id, agent_id, agent_version",
    "agent_versions",
    "tenant_id, agent_id, version",
    "sessions_agent_id_agent_version_fkey",
  ],
  ["sessions", "tenant_id, environment_id", "environments", "tenant_id, id", "sessions_environment_id_fkey"],
  [
    "sessions",
    "tenant_id, parent_session_id",
    "sessions",
    "tenant_id, id",
    "sessions_parent_session_id_fkey",
  ],
  ["session_events", "tenant_id, session_id", "sessions", "tenant_id, id", "session_events_session_id_fkey"],
  ["wakes", "tenant_id, session_id", "sessions", "tenant_id, id", "wakes_session_id_fkey"],
  ["tool_batches", "tenant_id, session_id", "sessions", "tenant_id, id", "tool_batches_session_id_fkey"],
  ["tool_batches", "tenant_id, wake_id", "wakes", "tenant_id, id", "tool_batches_wake_id_fkey"],
  ["tool_calls", "tenant_id, id", "session_events", "tenant_id, id", "tool_calls_id_fkey", true],
  ["tool_calls", "tenant_id, session_id", "sessions", "tenant_id, id", "tool_calls_session_id_fkey"],
  ["tool_calls", "tenant_id, wake_id", "wakes", "tenant_id, id", "tool_calls_wake_id_fkey"],
  ["tool_calls", "tenant_id, batch_id", "tool_batches", "tenant_id, id", "tool_calls_batch_id_fkey"],
  ["agent_state", "tenant_id, agent_id", "agents", "tenant_id, id", "agent_state_agent_id_fkey"],
];

function tenantForeignKeys(): string[] {
  return TENANT_KEYS.flatMap(([table, columns, target, targetColumns, replaced, deferrable]) => [
    `ALTER TABLE ${table} ADD FOREIGN KEY (${columns}) REFERENCES ${target} (${targetColumns})${
      deferrable ? " DEFERRABLE INITIALLY DEFERRED" : ""
    }`,
    `ALTER TABLE ${table} DROP CONSTRAINT ${replaced}`,
  ]);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    // Outbox rows are `evt.<tenant>.<session>.<type>`; rows still queued get their tenant from it.
    "ALTER TABLE outbox ADD COLUMN tenant_id text",
    "UPDATE outbox SET tenant_id = split_part(topic, '.', 2)",
    "ALTER TABLE outbox ALTER COLUMN tenant_id SET NOT NULL",

    // The keys the tenant-carrying foreign keys reference; they replace the plain (tenant_id, id) indexes.
    "ALTER TABLE agents ADD CONSTRAINT agents_tenant_key UNIQUE (tenant_id, id)",
    "DROP INDEX agents_tenant_idx",
    "ALTER TABLE agent_versions ADD CONSTRAINT agent_versions_tenant_key UNIQUE (tenant_id, agent_id, version)",
    "ALTER TABLE environments ADD CONSTRAINT environments_tenant_key UNIQUE (tenant_id, id)",
    "DROP INDEX environments_tenant_idx",
    "ALTER TABLE sessions ADD CONSTRAINT sessions_tenant_key UNIQUE (tenant_id, id)",
    "DROP INDEX sessions_tenant_idx",
    "ALTER TABLE session_events ADD CONSTRAINT session_events_tenant_key UNIQUE (tenant_id, id)",
    "ALTER TABLE wakes ADD CONSTRAINT wakes_tenant_key UNIQUE (tenant_id, id)",
    "ALTER TABLE tool_batches ADD CONSTRAINT tool_batches_tenant_key UNIQUE (tenant_id, id)",
    ...tenantForeignKeys(),

    `CREATE FUNCTION wl_isolate_tenant_table(target regclass) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
      EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
      EXECUTE format('CREATE POLICY tenant_isolation ON %s USING (tenant_id = current_setting(%L, true))'
        || ' WITH CHECK (tenant_id = current_setting(%L, true))', target, 'wakeloop.tenant_id', 'wakeloop.tenant_id');
    END
    $$`,
    `DO $$
    DECLARE target regclass;
    BEGIN
      FOR target IN
        SELECT format('%I.%I', c.table_schema, c.table_name)::regclass
        FROM information_schema.columns c
        JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE'
      LOOP
        PERFORM wl_isolate_tenant_table(target);
      END LOOP;
    END
    $$`,

    // The gateway learns a key's tenant from the key: the one lookup made before a tenant is known.
    `CREATE FUNCTION wl_api_key_principal(key_hash text)
      RETURNS TABLE (id text, tenant_id text, role text) LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT k.id, k.tenant_id, k.role FROM api_keys k WHERE k.key_hash = $1 AND k.revoked_at IS NULL
    $$`,
    // The lease sweeper's scans: ids and the fence it needs, then each wake is handled as its tenant.
    `CREATE FUNCTION wl_expired_leases(before timestamptz, max_rows integer)
      RETURNS TABLE (id text, tenant_id text, session_id text, attempt integer, lease_epoch bigint)
      LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT w.id, w.tenant_id, w.session_id, w.attempt, w.lease_epoch FROM wakes w
      WHERE w.status = 'running' AND w.lease_expires_at < $1 ORDER BY w.lease_expires_at LIMIT $2
    $$`,
    `CREATE FUNCTION wl_stale_queued_wakes(before timestamptz, max_rows integer)
      RETURNS TABLE (id text, tenant_id text, session_id text, attempt integer, reason text)
      LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT w.id, w.tenant_id, w.session_id, w.attempt, w.reason FROM wakes w
      WHERE w.status = 'queued' AND w.due_at < $1 ORDER BY w.due_at LIMIT $2
    $$`,
    // The relay publishes every tenant's rows in commit order; it sees only what it publishes.
    `CREATE FUNCTION wl_outbox_batch(max_rows integer)
      RETURNS TABLE (id bigint, topic text, msg_id text, body jsonb, headers jsonb, age_ms float8)
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      SELECT o.id, o.topic, o.msg_id, o.body, o.headers,
        (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
      FROM outbox o ORDER BY o.id LIMIT $1
    $$`,
    `CREATE FUNCTION wl_outbox_delete(ids bigint[]) RETURNS void LANGUAGE sql VOLATILE ${DEFINER} AS $$
      DELETE FROM outbox WHERE id = ANY ($1)
    $$`,
    `CREATE FUNCTION wl_expire_idempotency_keys(before timestamptz) RETURNS bigint
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      WITH expired AS (DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING 1)
      SELECT count(*) FROM expired
    $$`,
    // One exporter batch holds spans of many tenants and of none (sandbox and memory services).
    `CREATE FUNCTION wl_insert_spans(rows jsonb) RETURNS void LANGUAGE sql VOLATILE ${DEFINER} AS $$
      INSERT INTO spans (trace_id, span_id, parent_span_id, tenant_id, session_id, wake_id, name, kind,
        service_name, start_time, end_time, status_code, status_message, attributes, events)
      SELECT r.trace_id, r.span_id, r.parent_span_id, r.tenant_id, r.session_id, r.wake_id, r.name, r.kind,
        r.service_name, r.start_time, r.end_time, r.status_code, r.status_message,
        r.attributes::jsonb, r.events::jsonb
      FROM jsonb_to_recordset($1) AS r (trace_id text, span_id text, parent_span_id text, tenant_id text,
        session_id text, wake_id text, name text, kind text, service_name text, start_time timestamptz,
        end_time timestamptz, status_code text, status_message text, attributes text, events text)
      ON CONFLICT (trace_id, span_id) DO NOTHING
    $$`,
    // A trace is the tenant's when one of its spans is; then its tenantless spans belong to it too.
    `CREATE FUNCTION wl_tenant_trace_spans(trace text, wake text) RETURNS SETOF spans
      LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT s.* FROM spans s WHERE s.trace_id IN (
        SELECT o.trace_id FROM spans o
        WHERE o.tenant_id = ${TENANT} AND (o.trace_id = $1 OR o.wake_id = $2))
    $$`,
    ...[
      "wl_api_key_principal(text)",
      "wl_expired_leases(timestamptz, integer)",
      "wl_stale_queued_wakes(timestamptz, integer)",
      "wl_outbox_batch(integer)",
      "wl_outbox_delete(bigint[])",
      "wl_expire_idempotency_keys(timestamptz)",
      "wl_insert_spans(jsonb)",
      "wl_tenant_trace_spans(text, text)",
      "wl_isolate_tenant_table(regclass)",
    ].map((fn) => `REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`),
  ]);
}
