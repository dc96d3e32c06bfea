import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// Fewer round trips per step and per wake start (issue #9).
//
// A state-tool step in one round trip: `wl_append_state` is `wl_append` (migration 0011)
// and, once that has appended, the step's `set_state` writes, in the same statement. Before, the
// step's commit was a transaction of four round trips (BEGIN with the tenant scope, the upsert,
// `wl_append`, COMMIT). The writes land only when the append passed its fence and head checks, so
// a call's effect commits with its call and result or not at all. The state belongs to the session's
// agent, read from the row `wl_append` has just locked; a key written twice keeps its last value.
//
// A wake's start in one round trip: `wl_start_wake` is `wl_acquire_lease` (as 0021 left it, plus the
// session's `child_run` of 0027, so the row is the whole session row) with the first page of the history after what the worker already holds (its history cache, `p_known`
// events) up to the session's last seq, and whether the agent has any tool of its own, so the wake
// reads its tools (`listAgentTools`, a transaction of three round trips) only when there are some.
// The scoping block is 0011's, copied on purpose: an applied migration's SQL must never change with
// another file.
const SCOPE = `
  IF coalesce(current_setting('wakeloop.tenant_id', true), '') NOT IN ('', p_tenant) THEN
    RAISE EXCEPTION 'one transaction cannot act for two tenants' USING ERRCODE = 'WL001';
  END IF;
  PERFORM set_config('wakeloop.tenant_id', p_tenant, true);`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_append_state(
        p_tenant text, p_session text, p_fence bigint, p_expected_seq integer, p_state jsonb,
        p_events jsonb, p_headers jsonb, p_now timestamptz, p_consume_upto integer,
        p_tool_batch jsonb, p_tool_calls jsonb, p_settled jsonb, p_finish jsonb, p_agent_state jsonb)
      RETURNS TABLE (outcome text, last_seq integer, lease_epoch bigint, state jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        answer record;
      BEGIN
        SELECT * INTO answer FROM wl_append(p_tenant, p_session, p_fence, p_expected_seq, p_state,
          p_events, p_headers, p_now, p_consume_upto, p_tool_batch, p_tool_calls, p_settled, p_finish);
        IF answer.outcome = 'appended' AND p_agent_state IS NOT NULL THEN
          INSERT INTO agent_state (tenant_id, agent_id, key, value, updated_at)
            SELECT DISTINCT ON (w.item->>'key') p_tenant, s.agent_id, w.item->>'key', w.item->'value', p_now
            FROM jsonb_array_elements(p_agent_state) WITH ORDINALITY AS w (item, ord)
              JOIN sessions s ON s.tenant_id = p_tenant AND s.id = p_session
            ORDER BY w.item->>'key', w.ord DESC
          ON CONFLICT (tenant_id, agent_id, key)
            DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;
        END IF;
        RETURN QUERY SELECT answer.outcome, answer.last_seq, answer.lease_epoch, answer.state;
      END
    $$`,
    `CREATE FUNCTION wl_start_wake(p_tenant text, p_session text, p_wake text, p_worker text,
        p_ttl_ms integer, p_known integer, p_page integer)
      RETURNS TABLE (id text, tenant_id text, agent_id text, agent_version integer, environment_id text,
        parent_session_id text, status text, state jsonb, last_seq integer, lease_epoch bigint,
        created_at timestamptz, updated_at timestamptz, depth integer, child_outcome jsonb, model text,
        child_run jsonb, agent_spec jsonb, environment_spec jsonb, has_agent_tools boolean, events jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        RETURN QUERY SELECT l.id, l.tenant_id, l.agent_id, l.agent_version, l.environment_id,
          l.parent_session_id, l.status, l.state, l.last_seq, l.lease_epoch, l.created_at, l.updated_at,
          l.depth, l.child_outcome, l.model, s.child_run, l.agent_spec, l.environment_spec,
          EXISTS (SELECT 1 FROM agent_code c WHERE c.tenant_id = p_tenant AND c.agent_id = l.agent_id
            AND c.kind = 'tool' AND c.deleted_at IS NULL),
          coalesce((SELECT jsonb_agg(to_jsonb(page) ORDER BY page.seq)
            FROM (SELECT * FROM session_events e
              WHERE e.tenant_id = p_tenant AND e.session_id = p_session AND e.seq > p_known
                AND e.seq <= l.last_seq
              ORDER BY e.seq LIMIT p_page) page), '[]'::jsonb)
        FROM wl_acquire_lease(p_tenant, p_session, p_wake, p_worker, p_ttl_ms) l
          JOIN sessions s ON s.tenant_id = p_tenant AND s.id = p_session;
      END
    $$`,
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "DROP FUNCTION wl_start_wake(text, text, text, text, integer, integer, integer)",
    "DROP FUNCTION wl_append_state(text, text, bigint, integer, jsonb, jsonb, jsonb, timestamptz, integer, jsonb, jsonb, jsonb, jsonb, jsonb)",
  ]);
}
