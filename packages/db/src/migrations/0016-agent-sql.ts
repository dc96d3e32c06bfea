import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

// Each agent's own SQL database (issue #13, db_sql / db_schema): a schema owned by a NOLOGIN role of
// the same name, `wl_agent_<hash of tenant and agent>`, with no grant on anything else. The harness
// runs agent SQL on a connection of the runner role (`<app role>_sql`, made by ensureAppRole), which
// owns nothing and may read nothing, inside one transaction:
//   wl_agent_sql_enter  creates the role and schema on first use and grants the role to the runner
//                       for this transaction only (it is revoked by leave or rolled back with the rest);
//   SET LOCAL ROLE      the agent's statement runs as the agent's role;
//   wl_agent_sql_leave  revokes the grant and refuses to commit a schema over its size quota.
// The agent may not grant its schema to anyone (leave refuses to commit a shared schema).
// A statement that resets the role falls back to the runner, which can do nothing; it cannot enter a
// second agent's role either, since enter refuses a second call in the same transaction.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE agent_sql_schemas (
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL,
      role_name text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, agent_id),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    "SELECT wl_isolate_tenant_table('agent_sql_schemas')",
    // One row per transaction that entered an agent's role; only the definer functions touch it.
    `CREATE TABLE agent_sql_entries (
      txid bigint PRIMARY KEY,
      role_name text NOT NULL,
      left_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    "REVOKE ALL ON agent_sql_entries FROM PUBLIC",
    // Agent roles reach nothing of the platform: not the public schema's objects, not temp tables
    // (which would escape the size quota). Services get both back by explicit grants (ensureAppRole).
    "REVOKE ALL ON SCHEMA public FROM PUBLIC",
    "DO $$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database()); END $$",
    `CREATE FUNCTION wl_agent_sql_enter(p_tenant text, p_agent text) RETURNS text
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text := 'wl_agent_' || left(md5(p_tenant || '/' || p_agent), 24);
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM agents WHERE tenant_id = p_tenant AND id = p_agent) THEN
        RAISE EXCEPTION 'no agent % in tenant %', p_agent, p_tenant USING ERRCODE = 'P0002';
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
    `CREATE FUNCTION wl_agent_sql_leave(p_quota_bytes bigint) RETURNS bigint
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text;
      used bigint;
    BEGIN
      UPDATE agent_sql_entries SET left_at = now()
      WHERE txid = txid_current() AND left_at IS NULL RETURNING role_name INTO agent_role;
      IF agent_role IS NULL THEN
        RAISE EXCEPTION 'this transaction holds no agent database' USING ERRCODE = '42501';
      END IF;
      EXECUTE format('REVOKE %I FROM %I', agent_role, session_user);
      -- Nothing in the schema is reachable without USAGE on it, so refusing to share the schema keeps
      -- an agent's data its own even when the agent grants on its tables.
      IF EXISTS (SELECT 1 FROM pg_namespace n, aclexplode(n.nspacl) a
                 WHERE n.nspname = agent_role AND a.grantee <> n.nspowner) THEN
        RAISE EXCEPTION 'an agent database cannot be shared with other roles' USING ERRCODE = '42501';
      END IF;
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) INTO used
      FROM pg_class c
      WHERE c.relnamespace = agent_role::regnamespace AND c.relkind IN ('r', 'm', 'S');
      IF used > p_quota_bytes THEN
        RAISE EXCEPTION 'agent database would be % bytes, over its quota of % bytes', used, p_quota_bytes
          USING ERRCODE = '53400', DETAIL = 'quota';
      END IF;
      RETURN used;
    END
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_agent_sql_enter(text, text) FROM PUBLIC",
    "REVOKE EXECUTE ON FUNCTION wl_agent_sql_leave(bigint) FROM PUBLIC",
  ]);
}
