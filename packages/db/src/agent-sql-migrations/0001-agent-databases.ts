import type { Kysely } from "kysely";
import { runStatements } from "../migrations/run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

/**
 * Functions of pg_catalog an agent's role must not execute (issue #30): session advisory locks outlive
 * the call and block other agents, large objects escape the size quota, `set_config` changes the pooled
 * connection's settings (and `role`), `pg_notify` signals listeners, the backend signals and the file
 * and logical-decoding functions reach past the agent's schema. PUBLIC loses them in this database only
 * (pg_proc is per database); the definer functions below run as the migration owner, which keeps the two
 * transaction-scoped locks they need.
 */
const REVOKED_FUNCTIONS =
  "^(pg_advisory_|pg_try_advisory_|lo_|loread$|lowrite$|pg_notify$|set_config$|pg_cancel_backend$|pg_terminate_backend$|pg_logical_emit_message$|pg_read_|pg_ls_|pg_stat_file$|pg_file)";

// The agent SQL database (issue #30 item 1): a database of its own, apart from the platform's, where each
// agent's db_sql runs in a schema owned by a NOLOGIN role of the same name, `wl_agent_<hash of tenant and
// agent>`. Nothing here is the platform's: no outbox channel to notify, no platform table in the catalog,
// no lock or large object the platform's store shares. The harness runs agent SQL as the runner role
// (`<app role>_sql`, see ensureAgentSqlRoles) in one transaction per call:
//   wl_agent_sql_enter  creates the role and schema on first use and grants the role to the runner for
//                       this transaction only (revoked by leave, or rolled back with the rest); refuses a
//                       second agent in the same transaction and an agent whose database was dropped;
//   SET LOCAL ROLE      the agent's statement runs as the agent's role;
//   wl_agent_sql_leave  revokes the grant, refuses a shared schema or a large object, and refuses to
//                       commit when what the role owns is over its size quota or its object count
//                       (each relation is a lock when a statement touches it, and the server's lock
//                       table is shared by every database on it; every object is catalog rows);
//   wl_agent_sql_drop   (the gateway, as the app role, when the agent is archived) drops the schema,
//                       everything the role owns and the role, and leaves a tombstone so a session still
//                       running cannot bring the database back.
// enter and drop meet on an advisory lock of the role's name: enter holds it shared, drop exclusively.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE agent_sql_schemas (
      tenant_id text NOT NULL,
      agent_id text NOT NULL,
      role_name text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      dropped_at timestamptz,
      PRIMARY KEY (tenant_id, agent_id)
    )`,
    // One row per transaction that entered an agent's role.
    `CREATE TABLE agent_sql_entries (
      txid bigint PRIMARY KEY,
      role_name text NOT NULL,
      left_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    "REVOKE ALL ON agent_sql_schemas, agent_sql_entries FROM PUBLIC",
    // Roles reach only what they are granted: not the public schema, not temporary tables (which would
    // escape the quota), not the database itself; no language, so no function of an agent's own can carry
    // a SET clause or a statement db_sql refuses at the top.
    "REVOKE ALL ON SCHEMA public FROM PUBLIC",
    "DO $$ BEGIN EXECUTE format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database()); END $$",
    "REVOKE USAGE ON LANGUAGE sql, plpgsql FROM PUBLIC",
    `DO $$
    DECLARE
      fn regprocedure;
    BEGIN
      FOR fn IN SELECT p.oid FROM pg_proc p
                WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname ~ '${REVOKED_FUNCTIONS}'
      LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
      END LOOP;
    END
    $$`,
    "GRANT EXECUTE ON FUNCTION pg_advisory_xact_lock(bigint), pg_advisory_xact_lock_shared(bigint) TO CURRENT_USER",
    `CREATE FUNCTION wl_agent_sql_enter(p_tenant text, p_agent text) RETURNS text
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text := 'wl_agent_' || left(md5(p_tenant || '/' || p_agent), 24);
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(hashtextextended(agent_role, 0));
      IF EXISTS (SELECT 1 FROM agent_sql_schemas WHERE role_name = agent_role AND dropped_at IS NOT NULL) THEN
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
    `CREATE FUNCTION wl_agent_sql_leave(p_quota_bytes bigint, p_max_objects integer) RETURNS bigint
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text;
      used bigint;
      objects integer;
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
      -- The quota counts every relation the role owns, wherever it is (tables with their indexes and
      -- TOAST, materialized views, sequences); large objects are refused outright.
      IF EXISTS (SELECT 1 FROM pg_largeobject_metadata WHERE lomowner = agent_role::regrole) THEN
        RAISE EXCEPTION 'an agent database cannot hold large objects' USING ERRCODE = '42501';
      END IF;
      -- Objects: every relation (indexes and TOAST included), and every other object the role owns
      -- (types, …) as its owner dependency records it; the schema itself is not counted.
      SELECT (SELECT count(*) FROM pg_class c WHERE c.relowner = agent_role::regrole)
           + (SELECT count(*) FROM pg_shdepend d
              WHERE d.refobjid = agent_role::regrole AND d.deptype = 'o'
                AND d.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND d.classid NOT IN ('pg_class'::regclass, 'pg_namespace'::regclass))
      INTO objects;
      IF objects > p_max_objects THEN
        RAISE EXCEPTION 'agent database would own % objects (tables, indexes, sequences, views, types, …), over its limit of %',
          objects, p_max_objects USING ERRCODE = '53400', DETAIL = 'quota';
      END IF;
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) INTO used
      FROM pg_class c
      WHERE c.relowner = agent_role::regrole AND c.relkind IN ('r', 'm', 'S');
      IF used > p_quota_bytes THEN
        RAISE EXCEPTION 'agent database would be % bytes, over its quota of % bytes', used, p_quota_bytes
          USING ERRCODE = '53400', DETAIL = 'quota';
      END IF;
      RETURN used;
    END
    $$`,
    `CREATE FUNCTION wl_agent_sql_drop(p_tenant text, p_agent text) RETURNS boolean
    LANGUAGE plpgsql ${DEFINER} AS $$
    DECLARE
      agent_role text := 'wl_agent_' || left(md5(p_tenant || '/' || p_agent), 24);
      dropped boolean := false;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended(agent_role, 0));
      INSERT INTO agent_sql_schemas (tenant_id, agent_id, role_name, dropped_at)
      VALUES (p_tenant, p_agent, agent_role, now())
      ON CONFLICT (tenant_id, agent_id) DO UPDATE SET dropped_at = coalesce(agent_sql_schemas.dropped_at, now());
      IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = agent_role) THEN
        -- The schema and every table, view and grant of the role in this database.
        EXECUTE format('DROP OWNED BY %I CASCADE', agent_role);
        EXECUTE format('DROP ROLE %I', agent_role);
        dropped := true;
      END IF;
      RETURN dropped;
    END
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_agent_sql_enter(text, text) FROM PUBLIC",
    "REVOKE EXECUTE ON FUNCTION wl_agent_sql_leave(bigint, integer) FROM PUBLIC",
    "REVOKE EXECUTE ON FUNCTION wl_agent_sql_drop(text, text) FROM PUBLIC",
  ]);
}
