import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentSqlLimits,
  agentSqlDatabaseUrl,
  describeAgentSchema,
  dropAgentSqlSchema,
  runAgentSql,
} from "./agent-sql";
import type { AgentScope } from "./agent-state";
import { withTenant } from "./tenant-scope";

let testDb: TestDatabase;
let pool: pg.Pool;
/** The migration owner on the agent SQL database: sees every agent's role and schema. */
let owner: pg.Pool;
/** The app role on the agent SQL database, as the gateway holds it to drop archived agents' databases. */
let app: pg.Pool;
let mine: { tenantId: string; agentId: string };
let sibling: SeededAgent;

const limits: AgentSqlLimits = {
  statementTimeoutMs: 5_000,
  maxRows: 1_000,
  quotaBytes: 100 * 1024 * 1024,
  maxObjects: 500,
};

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 3 });
  pool = new pg.Pool({ connectionString: testDb.agentSqlUrl, max: 3 });
  owner = new pg.Pool({ connectionString: testDb.agentSqlOwnerUrl, max: 2 });
  app = new pg.Pool({ connectionString: agentSqlDatabaseUrl(testDb.appUrl), max: 1 });
  const seeded = await seedAgent(testDb.db);
  mine = { tenantId: seeded.tenantId, agentId: seeded.agentId };
  sibling = await seedAgent(testDb.db);
});
afterAll(async () => {
  await pool.end();
  await owner.end();
  await app.end();
  await testDb.drop();
});

const run = (sql: string, params: unknown[] = [], options: Partial<AgentSqlLimits> = {}) =>
  runAgentSql(pool, mine, { sql, params }, { ...limits, ...options });

/** The agent's role (and schema) name, once it has one. */
async function roleOf(agentId: string): Promise<string> {
  const found = await owner.query<{ role_name: string }>(
    "SELECT role_name FROM agent_sql_schemas WHERE agent_id = $1",
    [agentId],
  );
  const role = found.rows[0]?.role_name;
  if (role === undefined) throw new Error(`agent ${agentId} has no SQL database`);
  return role;
}

/** What the gateway's archive does: marks the agent archived, then drops its database. */
async function archive(scope: AgentScope): Promise<boolean> {
  await withTenant(testDb.db, scope.tenantId, (trx) =>
    trx
      .updateTable("agents")
      .set({ archived_at: new Date() })
      .where("tenant_id", "=", scope.tenantId)
      .where("id", "=", scope.agentId)
      .execute(),
  );
  return dropAgentSqlSchema(app, scope);
}

describe("agent SQL", () => {
  it("creates, writes with ? params, reads rows and describes the schema", async () => {
    expect(await run("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL, meta jsonb)")).toEqual({
      kind: "changes",
      command: "CREATE",
      changes: 0,
    });
    const written = await run("INSERT INTO notes (body, meta) VALUES (?, ?), (?, NULL)", [
      "a '?'",
      { k: 1 },
      "b",
    ]);
    expect(written).toMatchObject({ kind: "changes", command: "INSERT", changes: 2 });
    expect(await run("SELECT body, meta->>'k' AS k FROM notes WHERE body <> '?' ORDER BY id")).toEqual({
      kind: "rows",
      columns: ["body", "k"],
      rows: [
        ["a '?'", "1"],
        ["b", null],
      ],
      row_count: 2,
      truncated: false,
    });
    expect(await run("UPDATE notes SET body = ? WHERE id = ? RETURNING id", ["c", 2])).toMatchObject({
      kind: "rows",
      rows: [[2]],
    });
    expect(await describeAgentSchema(pool, mine, limits)).toEqual([
      {
        name: "notes",
        columns: [
          { name: "id", type: "integer", notnull: true, pk: true },
          { name: "body", type: "text", notnull: true, pk: false },
          { name: "meta", type: "jsonb", notnull: false, pk: false },
        ],
        row_count: 2,
      },
    ]);
  });

  it("runs calls of one agent side by side (each holds the role for its own transaction)", async () => {
    await run("CREATE TABLE hits (n int)");
    await Promise.all(Array.from({ length: 12 }, (_, n) => run("INSERT INTO hits VALUES (?)", [n])));
    expect(await run("SELECT count(*)::int FROM hits")).toMatchObject({ rows: [[12]] });
    // No grant outlives its call.
    const members = await pool.query(
      "SELECT count(*)::int AS n FROM pg_auth_members WHERE roleid = $1::regrole",
      [await roleOf(mine.agentId)],
    );
    expect(members.rows[0]?.n).toBe(0);
  });

  it("returns at most maxRows rows and says so", async () => {
    const result = await run("SELECT g FROM generate_series(1, 5000) AS g");
    expect(result).toMatchObject({ kind: "rows", row_count: 1_000, truncated: true });
    const capped = await run("SELECT g FROM generate_series(1, 3) AS g", [], { maxRows: 3 });
    expect(capped).toMatchObject({ row_count: 3, truncated: false });
  });

  it("cancels a statement past the timeout with a clear error", async () => {
    await expect(run("SELECT pg_sleep(2)", [], { statementTimeoutMs: 200 })).rejects.toMatchObject({
      code: "agent_sql_timeout",
      message: expect.stringMatching(/longer than the 200 ms limit/),
    });
  });

  it("rolls back a write that takes the schema over its quota", async () => {
    await run("CREATE TABLE blobs (body text)");
    await expect(
      run("INSERT INTO blobs SELECT md5(g::text) FROM generate_series(1, 20000) AS g", [], {
        quotaBytes: 256 * 1024,
      }),
    ).rejects.toMatchObject({
      code: "agent_sql_quota",
      message: expect.stringMatching(/over its quota of 262144 bytes/),
    });
    expect(await run("SELECT count(*)::int FROM blobs")).toMatchObject({ rows: [[0]] });
  });

  it("cannot read another agent's schema, the platform's tables, nor escape its role", async () => {
    await runAgentSql(
      pool,
      { tenantId: sibling.tenantId, agentId: sibling.agentId },
      { sql: "CREATE TABLE secrets (s text)", params: [] },
      limits,
    );
    const siblingSchema = await roleOf(sibling.agentId);
    await expect(run(`SELECT * FROM ${siblingSchema}.secrets`)).rejects.toMatchObject({
      code: "agent_sql_error",
      message: expect.stringMatching(/permission denied for schema/),
    });
    await expect(run("SELECT * FROM public.sessions")).rejects.toMatchObject({
      message: expect.stringMatching(/permission denied for schema public/),
    });
    // The role cannot be left: no set_config, no SET, no DO block or function of its own to hide them in.
    await expect(run("SELECT set_config('role', 'none', true)")).rejects.toMatchObject({
      message: expect.stringMatching(/permission denied for function set_config/),
    });
    const enterSibling = `DO $$ BEGIN
      PERFORM public.wl_agent_sql_enter('${sibling.tenantId}', '${sibling.agentId}');
    END $$`;
    await expect(run(enterSibling)).rejects.toMatchObject({ code: "agent_sql_refused" });
    await expect(run(`SET ROLE ${siblingSchema}`)).rejects.toMatchObject({ code: "agent_sql_refused" });
    // Were it left, the runner could not enter a second agent in the same transaction.
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT wl_agent_sql_enter($1, $2)", [mine.tenantId, mine.agentId]);
      await expect(
        client.query("SELECT wl_agent_sql_enter($1, $2)", [sibling.tenantId, sibling.agentId]),
      ).rejects.toMatchObject({ message: expect.stringMatching(/already entered an agent database/) });
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    const mySchema = await roleOf(mine.agentId);
    await expect(run(`GRANT USAGE ON SCHEMA ${mySchema} TO PUBLIC`)).rejects.toMatchObject({
      message: expect.stringMatching(/cannot be shared/),
    });
    await expect(run("CREATE TEMP TABLE t (x int)")).rejects.toMatchObject({
      message: expect.stringMatching(/permission denied/),
    });
  });

  it("refuses transaction control, session statements, empty SQL and mismatched params without running anything", async () => {
    await expect(run("COMMIT")).rejects.toMatchObject({ code: "agent_sql_refused" });
    await expect(run("SET work_mem = '1GB'")).rejects.toMatchObject({
      code: "agent_sql_refused",
      message: expect.stringMatching(/^SET is not allowed: db_sql runs data and schema statements/),
    });
    expect(await run("SHOW work_mem")).toMatchObject({ kind: "rows", rows: [["4MB"]] });
    await expect(run("  -- nothing\n")).rejects.toMatchObject({ code: "invalid_request" });
    await expect(run("SELECT ?", [])).rejects.toMatchObject({ code: "invalid_request" });
    await expect(run("SELECT 1; DROP TABLE notes")).rejects.toMatchObject({ code: "agent_sql_error" });
    expect(await run("SELECT count(*)::int FROM notes")).toMatchObject({ rows: [[2]] });
  });

  it("drops an archived agent's role and schema with the archive, once, and refuses it afterwards", async () => {
    const doomed = await seedAgent(testDb.db);
    const scope = { tenantId: doomed.tenantId, agentId: doomed.agentId };
    await runAgentSql(pool, scope, { sql: "CREATE TABLE kept (s text)", params: [] }, limits);
    await runAgentSql(pool, scope, { sql: "INSERT INTO kept VALUES ('x')", params: [] }, limits);
    const role = await roleOf(doomed.agentId);
    const present = async () => {
      const found = await pool.query<{ roles: number; schemas: number }>(
        `SELECT (SELECT count(*)::int FROM pg_roles WHERE rolname = $1) AS roles,
                (SELECT count(*)::int FROM pg_namespace WHERE nspname = $1) AS schemas`,
        [role],
      );
      return found.rows[0];
    };

    // A drop that is rolled back leaves the role, schema and rows as they were.
    const dropping = await owner.connect();
    try {
      await dropping.query("BEGIN");
      await dropping.query("SELECT wl_agent_sql_drop($1, $2)", [scope.tenantId, scope.agentId]);
    } finally {
      await dropping.query("ROLLBACK");
      dropping.release();
    }
    expect(await present()).toEqual({ roles: 1, schemas: 1 });
    expect(await runAgentSql(pool, scope, { sql: "SELECT s FROM kept", params: [] }, limits)).toMatchObject({
      rows: [["x"]],
    });

    expect(await archive(scope)).toBe(true);
    expect(await present()).toEqual({ roles: 0, schemas: 0 });
    // A second archive finds nothing to drop, and a session still running cannot bring the database back.
    expect(await archive(scope)).toBe(false);
    await expect(
      runAgentSql(pool, scope, { sql: "CREATE TABLE again (s text)", params: [] }, limits),
    ).rejects.toMatchObject({ code: "agent_sql_error", message: expect.stringMatching(/is archived/) });
    expect(await present()).toEqual({ roles: 0, schemas: 0 });
    // The sibling's database is untouched.
    expect(
      await describeAgentSchema(pool, { tenantId: sibling.tenantId, agentId: sibling.agentId }, limits),
    ).toEqual(expect.arrayContaining([expect.objectContaining({ name: "secrets" })]));
  });

  it("serialises an archive with a call in flight: the call commits first, or waits and is refused", async () => {
    const agent = await seedAgent(testDb.db);
    const scope = { tenantId: agent.tenantId, agentId: agent.agentId };
    // Long enough for the waits below on a loaded machine; the lock timeout is the statement timeout.
    const patient = { ...limits, statementTimeoutMs: 60_000 };
    await runAgentSql(pool, scope, { sql: "CREATE TABLE t (x int)", params: [] }, limits);
    const role = await roleOf(agent.agentId);
    const admin = new pg.Client({ connectionString: testDb.agentSqlOwnerUrl });
    await admin.connect();
    const waitingOnLocks = async (count: number) => {
      await expect
        .poll(
          async () =>
            (
              await admin.query<{ n: number }>(
                "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
              )
            ).rows[0]?.n,
          { timeout: 60_000, interval: 50 },
        )
        .toBeGreaterThanOrEqual(count);
    };
    try {
      // A call that entered holds the agent's lock shared: the archive waits until it commits.
      await admin.query("BEGIN");
      await admin.query(`LOCK TABLE ${role}.t IN ACCESS EXCLUSIVE MODE`);
      const call = runAgentSql(pool, scope, { sql: "INSERT INTO t VALUES (1)", params: [] }, patient);
      await waitingOnLocks(1);
      const archived = archive(scope);
      await waitingOnLocks(2);
      await admin.query("COMMIT");
      expect(await call).toMatchObject({ kind: "changes", changes: 1 });
      expect(await archived).toBe(true);
      expect((await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role])).rows).toEqual([]);

      // An archive that has dropped but not yet committed holds the lock: a call waits, then is refused.
      const next = await seedAgent(testDb.db);
      const nextScope = { tenantId: next.tenantId, agentId: next.agentId };
      await runAgentSql(pool, nextScope, { sql: "CREATE TABLE t (x int)", params: [] }, limits);
      await admin.query("BEGIN");
      await admin.query("SELECT wl_agent_sql_drop($1, $2)", [next.tenantId, next.agentId]);
      // The expectation holds the promise from the start: it is refused as the COMMIT lands, before
      // that await returns, and a rejection nobody handles yet fails the run.
      const late = expect(
        runAgentSql(pool, nextScope, { sql: "INSERT INTO t VALUES (1)", params: [] }, patient),
      ).rejects.toMatchObject({ message: expect.stringMatching(/is archived/) });
      await waitingOnLocks(1);
      await admin.query("COMMIT");
      await late;
    } finally {
      await admin.end();
    }
  });
});
