import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const SCOPE = `
  IF coalesce(current_setting('wakeloop.tenant_id', true), '') NOT IN ('', p_tenant) THEN
    RAISE EXCEPTION 'one transaction cannot act for two tenants' USING ERRCODE = 'WL001';
  END IF;
  PERFORM set_config('wakeloop.tenant_id', p_tenant, true);`;

// A session can run another model of its agent's provider than the agent's own (issue #11):
// `spawn_session(model)` sets it on the child, a scheduled task's `model` on each session it starts.
// Null means the agent version's model. It is a column, not part of the projection, since no event
// changes it after the session is created. `wl_acquire_lease` (0015) returns the session row column by
// column, so it is redefined to return `model` too; its body is unchanged.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "ALTER TABLE sessions ADD COLUMN model text CHECK (model IS NULL OR length(model) BETWEEN 1 AND 200)",
    "ALTER TABLE schedules ADD COLUMN model text CHECK (model IS NULL OR length(model) BETWEEN 1 AND 200)",
    "DROP FUNCTION wl_acquire_lease(text, text, text, text, integer)",
    `CREATE FUNCTION wl_acquire_lease(p_tenant text, p_session text, p_wake text, p_worker text,
        p_ttl_ms integer)
      RETURNS TABLE (id text, tenant_id text, agent_id text, agent_version integer, environment_id text,
        parent_session_id text, status text, state jsonb, last_seq integer, lease_epoch bigint,
        created_at timestamptz, updated_at timestamptz, depth integer, child_outcome jsonb, model text,
        agent_spec jsonb, environment_spec jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        epoch bigint;
      BEGIN
        ${SCOPE}
        SELECT s.lease_epoch + 1 INTO epoch FROM sessions s
          WHERE s.tenant_id = p_tenant AND s.id = p_session FOR UPDATE;
        IF NOT FOUND THEN RETURN; END IF;
        UPDATE wakes w SET status = 'running', worker_id = p_worker, lease_epoch = epoch,
            lease_expires_at = now() + p_ttl_ms * interval '1 millisecond', started_at = now()
          WHERE w.id = p_wake AND w.tenant_id = p_tenant AND w.session_id = p_session AND w.status = 'queued';
        IF NOT FOUND THEN RETURN; END IF;
        RETURN QUERY
          UPDATE sessions s SET lease_epoch = epoch
          FROM agent_versions v
          WHERE s.tenant_id = p_tenant AND s.id = p_session
            AND v.tenant_id = s.tenant_id AND v.agent_id = s.agent_id AND v.version = s.agent_version
          RETURNING s.id, s.tenant_id, s.agent_id, s.agent_version, s.environment_id, s.parent_session_id,
            s.status, s.state, s.last_seq, s.lease_epoch, s.created_at, s.updated_at, s.depth,
            s.child_outcome, s.model, v.spec,
            (SELECT e.spec FROM environments e WHERE e.tenant_id = s.tenant_id AND e.id = s.environment_id);
      END
    $$`,
  ]);
}
