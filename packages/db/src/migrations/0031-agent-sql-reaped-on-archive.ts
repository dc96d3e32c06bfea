import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

// An archived agent's SQL database is dropped with it (issue #13's follow-up): its role and schema
// used to outlive the agent forever, and roles are cluster-wide.
//   wl_agent_sql_drop   drops the agent's schema, everything its role owns, and the role, in the
//                       caller's transaction (the archive's), so an archive that fails drops nothing;
//                       dropping what is already gone is a no-op.
//   wl_agent_sql_enter  is 0016's, refusing an archived agent, so a session still running after the
//                       archive cannot bring the database back. The rest of its body is 0016's, copied
//                       on purpose: an applied migration's SQL must never change with another file.
// The two meet on an advisory lock of the role's name: enter holds it shared for its transaction and
// reads `archived_at` after taking it; drop holds it exclusively. Either the call commits before the
// drop starts, or it waits for the archive to commit and then sees the agent archived.
// Agents archived before this migration have their databases dropped here.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_agent_sql_drop(p_tenant text, p_agent text) RETURNS boolean
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text := 'wl_agent_' || left(md5(p_tenant || '/' || p_agent), 24);
      dropped boolean := false;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended(agent_role, 0));
      DELETE FROM agent_sql_schemas WHERE tenant_id = p_tenant AND agent_id = p_agent;
      IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = agent_role) THEN
        -- The schema and every table, view, function and grant of the role in this database.
        EXECUTE format('DROP OWNED BY %I CASCADE', agent_role);
        EXECUTE format('DROP ROLE %I', agent_role);
        dropped := true;
      END IF;
      RETURN dropped;
    END
    $$`,
    `CREATE OR REPLACE FUNCTION wl_agent_sql_enter(p_tenant text, p_agent text) RETURNS text
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text := 'wl_agent_' || left(md5(p_tenant || '/' || p_agent), 24);
      archived timestamptz;
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(hashtextextended(agent_role, 0));
      SELECT archived_at INTO archived FROM agents WHERE tenant_id = p_tenant AND id = p_agent;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'no agent % in tenant %', p_agent, p_tenant USING ERRCODE = 'P0002';
      END IF;
      IF archived IS NOT NULL THEN
        RAISE EXCEPTION 'agent % is archived and its database was dropped', p_agent USING ERRCODE = 'P0002';
      END IF;
      DELETE FROM agent_sql_entries WHERE created_at < now() - interval '1 day';
      BEGIN
        INSERT INTO agent_sql_entries (txid, role_name) VALUES (txid_current(), agent_role);
      EXCEPTION WHEN unique_violation THEN
        RAISE EXCEPTION 'this transaction already entered an agent database' USING ERRCODE = '42501';
      END;
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = agent_role) THEN
        BEGIN
          EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', agent_role);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
          NULL; -- another transaction created it first
        END;
      END IF;
      IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = agent_role) THEN
        BEGIN
          EXECUTE format('CREATE SCHEMA %I AUTHORIZATION %I', agent_role, agent_role);
        EXCEPTION WHEN duplicate_schema OR unique_violation THEN
          NULL;
        END;
        INSERT INTO agent_sql_schemas (tenant_id, agent_id, role_name)
        VALUES (p_tenant, p_agent, agent_role) ON CONFLICT DO NOTHING;
      END IF;
      EXECUTE format('GRANT %I TO %I', agent_role, session_user);
      RETURN agent_role;
    END
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_agent_sql_drop(text, text) FROM PUBLIC",
    `DO $$
    DECLARE
      archived record;
    BEGIN
      FOR archived IN
        SELECT s.tenant_id, s.agent_id FROM agent_sql_schemas s
        JOIN agents a ON a.tenant_id = s.tenant_id AND a.id = s.agent_id
        WHERE a.archived_at IS NOT NULL
      LOOP
        PERFORM wl_agent_sql_drop(archived.tenant_id, archived.agent_id);
      END LOOP;
    END
    $$`,
  ]);
}
