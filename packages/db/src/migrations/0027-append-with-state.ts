import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// A state-tool step in one round trip (issue #9): `wl_append_state` is `wl_append` (migration 0011)
// and, once that has appended, the step's `set_state` writes, in the same statement. Before, the
// step's commit was a transaction of four round trips (BEGIN with the tenant scope, the upsert,
// `wl_append`, COMMIT). The writes land only when the append passed its fence and head checks, so
// a call's effect commits with its call and result or not at all. The state belongs to the session's
// agent, read from the row `wl_append` has just locked; a key written twice keeps its last value.
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
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "DROP FUNCTION wl_append_state(text, text, bigint, integer, jsonb, jsonb, jsonb, timestamptz, integer, jsonb, jsonb, jsonb, jsonb, jsonb)",
  ]);
}
