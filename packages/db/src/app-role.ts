import { WakeloopError } from "@wakeloop/contracts";
import { type Kysely, type QueryExecutorProvider, sql } from "kysely";
import pg from "pg";
import type { Database } from "./database";

/*
 * The role services connect as. Superusers, BYPASSRLS roles and (without FORCE) table owners skip
 * row-level security, so services must not use the role that migrated: this one logs in, owns nothing,
 * and may only read and write the tenant tables (under their policies) and call the narrow definer
 * functions of migration 0009. Roles are cluster-wide; the grants are per database, so this runs after
 * every migration (the migrate CLI does) and picks up tables that later migrations add.
 */

export interface AppRoleOptions {
  name: string;
  /** Set (or changed) when given; omit it where the server trusts local connections. */
  password?: string;
}

// Short enough to leave room for the runner role's `_sql` suffix.
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,58}$/;
const DUPLICATE_OBJECT = "42710";

/**
 * True when the connection's role skips row-level security (a superuser or BYPASSRLS): a service
 * connected so would serve every tenant's rows to a query that forgot its tenant.
 */
export async function roleBypassesRowSecurity(db: Kysely<Database>): Promise<boolean> {
  const result = await sql<{ bypasses: boolean }>`
    SELECT rolsuper OR rolbypassrls AS bypasses FROM pg_roles WHERE rolname = current_user`.execute(db);
  return result.rows[0]?.bypasses ?? false;
}

/** Creates the role if it is missing and grants it what services need in this database. Idempotent. */
export async function ensureAppRole(db: Kysely<Database>, options: AppRoleOptions): Promise<void> {
  if (!ROLE_NAME.test(options.name)) {
    throw new WakeloopError("app_role_invalid", `app role name ${options.name} must match ${ROLE_NAME}`);
  }
  const role = sql.id(options.name);
  await ensureLoginRole(db, options);
  const database = await sql<{ name: string }>`SELECT current_database() AS name`.execute(db);
  const databaseName = sql.id(database.rows[0]?.name ?? "");
  await sql`GRANT CONNECT, TEMPORARY ON DATABASE ${databaseName} TO ${role}`.execute(db);
  await sql`GRANT USAGE ON SCHEMA public TO ${role}`.execute(db);
  const tables = await sql<{ table_name: string }>`
    SELECT DISTINCT table_name FROM information_schema.columns
    WHERE table_schema = 'public' AND column_name = 'tenant_id'`.execute(db);
  for (const { table_name } of tables.rows) {
    await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON ${sql.id(table_name)} TO ${role}`.execute(db);
  }
  await sql`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${role}`.execute(db);
  const functions = await sql<{ signature: string }>`
    SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
    WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef AND p.proname LIKE 'wl\\_%'`.execute(db);
  for (const { signature } of functions.rows) {
    await sql`GRANT EXECUTE ON FUNCTION ${sql.raw(signature)} TO ${role}`.execute(db);
  }
}

/** The login role agent SQL runs on (`<app role>_sql`); the harness connects as it for db_sql. */
export function agentSqlRunnerRole(appRole: string): string {
  return `${appRole}_sql`;
}

/**
 * Session defaults of the runner role in the agent SQL database, in force from a connection's start, so
 * before any call's first statement. An agent's role cannot raise them: `temp_file_limit` is for
 * superusers only, and db_sql refuses `SET`, revokes `set_config` and every language (no function of
 * the agent's own can carry a `SET` clause); each call ends with `DISCARD ALL`, back to these.
 */
const RUNNER_SETTINGS: Readonly<Record<string, string>> = {
  temp_file_limit: "256MB",
  work_mem: "4MB",
  maintenance_work_mem: "64MB",
  max_parallel_workers_per_gather: "0",
};

export interface AgentSqlRolesOptions {
  /** The app role (made by ensureAppRole): it may drop an archived agent's database, nothing more. */
  appRole: string;
  /** The runner's own password, never the app role's; omit it where the server trusts local connections. */
  runnerPassword?: string;
}

/**
 * Grants the agent SQL database (migrated with migrateAgentSqlDatabase, run on it as its owner) to the
 * two roles that use it. The runner (`<app role>_sql`) logs in, may only enter an agent's role for one
 * transaction and leave it, and reads nothing itself, so a statement that resets its role gains nothing.
 * Idempotent; run after every migration, as ensureAppRole is. Needs a superuser (`temp_file_limit`).
 */
export async function ensureAgentSqlRoles(
  db: QueryExecutorProvider,
  options: AgentSqlRolesOptions,
): Promise<void> {
  const runner = agentSqlRunnerRole(options.appRole);
  if (!ROLE_NAME.test(options.appRole)) {
    throw new WakeloopError("app_role_invalid", `app role name ${options.appRole} must match ${ROLE_NAME}`);
  }
  await ensureLoginRole(db, {
    name: runner,
    ...(options.runnerPassword !== undefined && { password: options.runnerPassword }),
  });
  const database = await sql<{ name: string }>`SELECT current_database() AS name`.execute(db);
  const databaseName = sql.id(database.rows[0]?.name ?? "");
  for (const role of [runner, options.appRole]) {
    await sql`GRANT CONNECT ON DATABASE ${databaseName} TO ${sql.id(role)}`.execute(db);
    await sql`GRANT USAGE ON SCHEMA public TO ${sql.id(role)}`.execute(db);
  }
  await sql`GRANT EXECUTE ON FUNCTION wl_agent_sql_enter(text, text), wl_agent_sql_leave(bigint, integer)
    TO ${sql.id(runner)}`.execute(db);
  await sql`GRANT EXECUTE ON FUNCTION wl_agent_sql_drop(text, text) TO ${sql.id(options.appRole)}`.execute(
    db,
  );
  for (const [name, value] of Object.entries(RUNNER_SETTINGS)) {
    await sql`ALTER ROLE ${sql.id(runner)} IN DATABASE ${databaseName} SET ${sql.id(name)} = ${sql.lit(value)}`.execute(
      db,
    );
  }
}

async function ensureLoginRole(db: QueryExecutorProvider, options: AppRoleOptions): Promise<void> {
  const role = sql.id(options.name);
  const password = options.password === undefined ? sql`` : sql` PASSWORD ${sql.lit(options.password)}`;
  const existing = await sql<{ rolsuper: boolean; rolbypassrls: boolean }>`
    SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = ${options.name}`.execute(db);
  const found = existing.rows[0];
  if (found === undefined) {
    try {
      await sql`CREATE ROLE ${role} LOGIN NOINHERIT NOSUPERUSER NOBYPASSRLS${password}`.execute(db);
    } catch (error) {
      // Another migrate run created it between our check and our CREATE.
      if (!(error instanceof pg.DatabaseError && error.code === DUPLICATE_OBJECT)) throw error;
    }
  } else if (found.rolsuper || found.rolbypassrls) {
    throw new WakeloopError(
      "app_role_unsafe",
      `role ${options.name} is a superuser or bypasses row-level security; services cannot use it`,
    );
  } else if (options.password !== undefined) {
    await sql`ALTER ROLE ${role}${password}`.execute(db);
  }
}
