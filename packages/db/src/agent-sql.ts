import { WakeloopError } from "@wakeloop/contracts";
import pg from "pg";
import type { AgentScope } from "./agent-state";
import { leadingKeyword, translatePlaceholders } from "./sql-placeholders";

/*
 * Each agent's own SQL database (db_sql / db_schema): a schema owned by the agent's NOLOGIN role in the
 * agent SQL database, apart from the platform's (agent-sql-migrations/0001), reached only through a
 * pool of the runner role. Every call is one transaction that sets its time limits, enters the agent's
 * role, runs one statement, and leaves through the size quota check; any refusal rolls the whole call
 * back, so a refused statement changes nothing. Every call ends with the connection reset, so nothing
 * an agent leaves on it reaches the next call, of any agent.
 */

/** A pool on the agent SQL database: of the runner role (db_sql), or of the app role (dropping). */
export type AgentSqlPool = pg.Pool;

export function createAgentSqlPool(options: { url: string; max: number }): AgentSqlPool {
  const pool = new pg.Pool({ connectionString: options.url, max: options.max });
  // An idle connection that breaks is discarded by the pool; without a listener it would kill the process.
  pool.on("error", () => {});
  return pool;
}

/** The agent SQL database's url for the platform's: same server, user and password, database `<name>_agents`. */
export function agentSqlDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `${url.pathname}_agents`;
  return url.toString();
}

/**
 * The runner role's default url for the platform's (`<user>_sql` on `<name>_agents`), without a
 * password: the runner has its own (WAKELOOP_AGENT_SQL_PASSWORD), so where the server asks for one,
 * AGENT_SQL_DATABASE_URL must carry it.
 */
export function agentSqlRunnerUrl(databaseUrl: string): string {
  const url = new URL(agentSqlDatabaseUrl(databaseUrl));
  url.username = `${url.username}_sql`;
  url.password = "";
  return url.toString();
}

export interface AgentSqlLimits {
  statementTimeoutMs: number;
  maxRows: number;
  quotaBytes: number;
  /** Objects (tables, indexes, TOAST, sequences, views, types, …) one agent's role may own. */
  maxObjects: number;
}

export type AgentSqlResult =
  | { kind: "rows"; columns: string[]; rows: unknown[][]; row_count: number; truncated: boolean }
  | { kind: "changes"; command: string; changes: number };

export interface AgentSchemaTable {
  name: string;
  columns: { name: string; type: string; notnull: boolean; pk: boolean }[];
  row_count: number;
}

/** Statements that end or split the call's transaction, which would let a grant outlive the call. */
const TRANSACTION_CONTROL = new Set([
  "begin",
  "start",
  "commit",
  "end",
  "rollback",
  "abort",
  "savepoint",
  "release",
  "prepare",
  "copy",
]);
/** Statements whose rows are read through a cursor, so no more than the cap leaves the server. */
const CURSOR_READS = new Set(["select", "with", "values", "table"]);
/**
 * Everything else an agent may run: data and schema statements, and `SHOW`. Not `SET`/`RESET`/
 * `DISCARD`, `LISTEN`, `NOTIFY`, `DECLARE` (a cursor `WITH HOLD` outlives the call), `DO`, `CALL`,
 * `LOCK`, `LOAD`, …, which change the session, reach past the agent's schema or wait on others.
 */
const ALLOWED = new Set([
  ...CURSOR_READS,
  "insert",
  "update",
  "delete",
  "merge",
  "create",
  "alter",
  "drop",
  "truncate",
  "comment",
  "explain",
  "analyze",
  "grant",
  "revoke",
  "show",
]);

const QUERY_CANCELED = "57014";
const LOCK_NOT_AVAILABLE = "55P03";
const QUOTA_EXCEEDED = "53400";

/** Runs one agent statement with `?` params; refusals are WakeloopErrors with an agent_sql_* code. */
export async function runAgentSql(
  pool: AgentSqlPool,
  scope: AgentScope,
  statement: { sql: string; params: readonly unknown[] },
  limits: AgentSqlLimits,
): Promise<AgentSqlResult> {
  const keyword = leadingKeyword(statement.sql);
  if (keyword === "") throw new WakeloopError("invalid_request", "the SQL is empty");
  if (TRANSACTION_CONTROL.has(keyword)) {
    throw new WakeloopError(
      "agent_sql_refused",
      `${keyword.toUpperCase()} is not allowed: each db_sql call is one transaction of its own${keyword === "copy" ? "; use INSERT … VALUES" : ""}`,
    );
  }
  if (!ALLOWED.has(keyword)) {
    throw new WakeloopError(
      "agent_sql_refused",
      `${keyword.toUpperCase()} is not allowed: db_sql runs data and schema statements (SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, …)`,
    );
  }
  const text = translatePlaceholders(statement.sql, statement.params.length);
  const values = statement.params.map(toParam);
  return inAgentSchema(pool, scope, limits, async (client) => {
    if (CURSOR_READS.has(keyword)) {
      await client.query(extended(`DECLARE wl_agent_rows NO SCROLL CURSOR FOR ${text}`, values));
      const fetched = await client.query(extended(`FETCH ${limits.maxRows + 1} FROM wl_agent_rows`, []));
      await client.query("CLOSE wl_agent_rows");
      return rowsResult(fetched, limits.maxRows);
    }
    const result = await client.query(extended(text, values));
    if (result.fields.length > 0) return rowsResult(result, limits.maxRows);
    return { kind: "changes", command: result.command, changes: result.rowCount ?? 0 };
  });
}

/**
 * Array rows over the extended protocol even without params: it takes exactly one statement, so
 * `SELECT 1; COMMIT` is refused by the server instead of ending the call's transaction. (`queryMode`
 * is pg's, missing from its type definitions.)
 */
function extended(text: string, values: unknown[]): pg.QueryArrayConfig {
  const config: pg.QueryArrayConfig & { queryMode: "extended" } = {
    text,
    values,
    rowMode: "array",
    queryMode: "extended",
  };
  return config;
}

/** The agent's tables with their columns, primary keys and row counts. */
export function describeAgentSchema(
  pool: AgentSqlPool,
  scope: AgentScope,
  limits: AgentSqlLimits,
): Promise<AgentSchemaTable[]> {
  return inAgentSchema(pool, scope, limits, async (client, schema) => {
    const columns = await client.query<{
      table: string;
      name: string;
      type: string;
      notnull: boolean;
      pk: boolean;
    }>(
      `SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
         a.attnotnull AS notnull,
         EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary AND a.attnum = ANY (i.indkey)) AS pk
       FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
       WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY c.relname, a.attnum`,
      [schema],
    );
    const tables = new Map<string, AgentSchemaTable>();
    for (const { table, ...column } of columns.rows) {
      const entry = tables.get(table) ?? { name: table, columns: [], row_count: 0 };
      entry.columns.push(column);
      tables.set(table, entry);
    }
    for (const table of tables.values()) {
      const counted = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${client.escapeIdentifier(schema)}.${client.escapeIdentifier(table.name)}`,
      );
      table.row_count = Number(counted.rows[0]?.n ?? 0);
    }
    return [...tables.values()];
  });
}

/**
 * Drops the agent's SQL database: its schema, everything its role owns, and the role, and refuses the
 * agent from then on (wl_agent_sql_drop), through a pool of the app role on the agent SQL database.
 * Run it after the archive commits; dropping again is a no-op. True when there was something to drop,
 * false when there was none (never used, or already dropped).
 */
export async function dropAgentSqlSchema(pool: AgentSqlPool, scope: AgentScope): Promise<boolean> {
  const result = await pool.query<{ dropped: boolean }>("SELECT wl_agent_sql_drop($1, $2) AS dropped", [
    scope.tenantId,
    scope.agentId,
  ]);
  return result.rows[0]?.dropped ?? false;
}

async function inAgentSchema<T>(
  pool: AgentSqlPool,
  scope: AgentScope,
  limits: AgentSqlLimits,
  use: (client: pg.PoolClient, schema: string) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const timeoutMs = Math.max(1, Math.floor(limits.statementTimeoutMs));
  try {
    // The limits come first: entering waits on a lock (an archive's), and nothing may wait unbounded.
    await client.query(
      `BEGIN; SET LOCAL statement_timeout = ${timeoutMs}; SET LOCAL lock_timeout = ${timeoutMs}`,
    );
    const entered = await client.query<{ schema: string }>("SELECT wl_agent_sql_enter($1, $2) AS schema", [
      scope.tenantId,
      scope.agentId,
    ]);
    const schema = entered.rows[0]?.schema ?? "";
    await client.query(`SET LOCAL ROLE ${client.escapeIdentifier(schema)}`);
    await client.query(`SET LOCAL search_path = ${client.escapeIdentifier(schema)}, pg_catalog, pg_temp`);
    const result = await use(client, schema);
    await client.query("RESET ROLE");
    // Measuring a full schema may take longer than the agent's statement was allowed.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SELECT public.wl_agent_sql_leave($1::bigint, $2::int)", [
      limits.quotaBytes,
      limits.maxObjects,
    ]);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw agentSqlError(error, limits);
  } finally {
    // Back to the runner's session defaults: settings, role, LISTENs, cursors, prepared statements,
    // temporary objects and session locks all go. A connection that cannot be reset is closed.
    if (!broken) {
      await client.query("DISCARD ALL").catch(() => {
        broken = true;
      });
    }
    client.release(broken);
  }
}

function agentSqlError(error: unknown, limits: AgentSqlLimits): unknown {
  if (!(error instanceof pg.DatabaseError)) return error;
  if (error.code === LOCK_NOT_AVAILABLE) {
    return new WakeloopError(
      "agent_sql_timeout",
      `the statement waited longer than the ${limits.statementTimeoutMs} ms limit for a lock and was cancelled; nothing was changed`,
      { cause: error },
    );
  }
  if (error.code === QUERY_CANCELED) {
    return new WakeloopError(
      "agent_sql_timeout",
      `the statement ran longer than the ${limits.statementTimeoutMs} ms limit and was cancelled; nothing was changed`,
      { cause: error },
    );
  }
  if (error.code === QUOTA_EXCEEDED && error.detail === "quota") {
    return new WakeloopError(
      "agent_sql_quota",
      `${error.message}; the statement was rolled back. Delete rows or drop tables to make room.`,
      { cause: error },
    );
  }
  // Anything else the server refused is the statement's own error (syntax, missing table, privilege).
  return new WakeloopError("agent_sql_error", `SQL error: ${error.message}; nothing was changed`, {
    cause: error,
  });
}

function rowsResult(result: pg.QueryArrayResult, maxRows: number): AgentSqlResult {
  const truncated = result.rows.length > maxRows;
  const rows = truncated ? result.rows.slice(0, maxRows) : result.rows;
  return {
    kind: "rows",
    columns: result.fields.map((field) => field.name),
    rows,
    row_count: rows.length,
    truncated,
  };
}

// Objects and arrays go to Postgres as JSON text, so they bind to json/jsonb columns.
function toParam(value: unknown): unknown {
  return value !== null && typeof value === "object" ? JSON.stringify(value) : value;
}
