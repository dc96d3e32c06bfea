import { createHash, createHmac, pbkdf2Sync } from "node:crypto";
import { type AgentSqlLimits, runAgentSql } from "@wakeloop/db";
import { createTestDatabase, seedAgent, type TestDatabase } from "@wakeloop/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/*
 * Issue #30 item 1: what one agent's db_sql could do to other agents, other tenants and the platform
 * through the server it runs on (docs/security.md, "Agent SQL"). Each attack here worked before the
 * agent SQL database was split from the platform's and hardened: session advisory locks that outlived
 * the call, large objects outside the quota, session settings, LISTEN and held cursors inherited by the
 * next agent on the pooled connection, pg_notify on the platform's outbox channel, no lock timeout
 * before the call's first statement, no bound on the objects (so the locks) one agent holds, and a
 * runner role that opened with the app role's password.
 */

let testDb: TestDatabase;
let pool: pg.Pool;
let owner: pg.Pool;
let attacker: { tenantId: string; agentId: string };
let victim: { tenantId: string; agentId: string };

const limits: AgentSqlLimits = {
  statementTimeoutMs: 5_000,
  maxRows: 1_000,
  quotaBytes: 1024 * 1024,
  maxObjects: 500,
};

const as = (
  scope: { tenantId: string; agentId: string },
  sql: string,
  options: Partial<AgentSqlLimits> = {},
) => runAgentSql(pool, scope, { sql, params: [] }, { ...limits, ...options });

/** The one value of a one-row, one-column result. */
async function single(scope: { tenantId: string; agentId: string }, sql: string): Promise<unknown> {
  const result = await as(scope, sql);
  if (result.kind !== "rows") throw new Error(`${sql} returned no rows`);
  return result.rows[0]?.[0];
}

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 2 });
  // One connection: the victim's call runs on the very connection the attacker's call just used.
  pool = new pg.Pool({ connectionString: testDb.agentSqlUrl, max: 1 });
  owner = new pg.Pool({ connectionString: testDb.agentSqlOwnerUrl, max: 2 });
  attacker = await seedAgent(testDb.db);
  victim = await seedAgent(testDb.db);
  await as(victim, "CREATE TABLE secrets (body text)");
  await as(victim, "INSERT INTO secrets VALUES ('the victim''s secret')");
});
afterAll(async () => {
  await pool?.end();
  await owner?.end();
  await testDb?.drop();
});

const permissionDenied = { code: "agent_sql_error", message: expect.stringMatching(/permission denied/) };

describe("one agent's SQL against other agents and the platform", () => {
  it("takes no advisory lock, so none outlives a call and none blocks another agent", async () => {
    const victimRole = await single(victim, "SELECT current_user");
    // The lock every call of the victim's takes on entering its database, taken for good.
    await expect(
      as(attacker, `SELECT pg_advisory_lock(hashtextextended('${victimRole}', 0))`),
    ).rejects.toMatchObject(permissionDenied);
    // A hundred session locks, then a failure: the call is rolled back, session locks are not.
    await expect(
      as(attacker, "SELECT pg_advisory_lock(g), 1 / (100 - g) FROM generate_series(1, 100) g"),
    ).rejects.toMatchObject({ code: "agent_sql_error" });
    await expect(as(attacker, "SELECT pg_try_advisory_xact_lock(1)")).rejects.toMatchObject(permissionDenied);
    // pg_locks is the whole server's: only this agent SQL database's count.
    const held = await owner.query(
      `SELECT count(*)::int AS n FROM pg_locks
       WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(held.rows[0].n).toBe(0);
    expect(await single(victim, "SELECT count(*)::int FROM secrets")).toBe(1);
  });

  it("stores no large object, so nothing escapes the size quota", async () => {
    // 2 MB under a 1 MB quota, in pg_largeobject, which a schema's size never counted.
    await expect(
      as(attacker, "SELECT lo_from_bytea(0, convert_to(repeat('x', 2000000), 'UTF8'))"),
    ).rejects.toMatchObject(permissionDenied);
    await expect(as(attacker, "SELECT lo_create(0)")).rejects.toMatchObject(permissionDenied);
    const objects = await owner.query("SELECT count(*)::int AS n FROM pg_largeobject_metadata");
    expect(objects.rows[0].n).toBe(0);
  });

  it("leaves nothing on the pooled connection for the next agent to inherit", async () => {
    const defaultWorkMem = await single(victim, "SELECT current_setting('work_mem')");
    // Session-level settings: memory for every later query on the connection, and the role itself.
    await expect(as(attacker, "SELECT set_config('work_mem', '4GB', false)")).rejects.toMatchObject(
      permissionDenied,
    );
    await expect(as(attacker, "SET work_mem = '4GB'")).rejects.toMatchObject({ code: "agent_sql_refused" });
    // A function of its own whose SET clause raises it all the same.
    await expect(
      as(attacker, "CREATE FUNCTION big() RETURNS int LANGUAGE sql SET work_mem = '4GB' AS 'SELECT 1'"),
    ).rejects.toMatchObject(permissionDenied);
    await expect(as(attacker, "LISTEN wl_outbox")).rejects.toMatchObject({ code: "agent_sql_refused" });
    // A cursor held past the call's commit, which the next agent could FETCH from.
    await as(attacker, "CREATE TABLE mine (x text)");
    await as(attacker, "INSERT INTO mine VALUES ('attacker rows')");
    await expect(as(attacker, "DECLARE held CURSOR WITH HOLD FOR SELECT * FROM mine")).rejects.toMatchObject({
      code: "agent_sql_refused",
    });

    expect(await single(victim, "SELECT current_setting('work_mem')")).toBe(defaultWorkMem);
    expect(await single(victim, "SELECT count(*)::int FROM pg_listening_channels()")).toBe(0);
    expect(await single(victim, "SELECT count(*)::int FROM pg_cursors WHERE is_holdable")).toBe(0);
  });

  it("runs under a memory, temp file and lock limit it cannot raise", async () => {
    expect(await single(attacker, "SELECT current_setting('temp_file_limit')")).not.toBe("-1");
    expect(await single(attacker, "SELECT current_setting('max_parallel_workers_per_gather')")).toBe("0");
    await expect(as(attacker, "SELECT set_config('temp_file_limit', '-1', true)")).rejects.toMatchObject(
      permissionDenied,
    );
    // The limits apply before the call's first statement: the lock a call takes on entering its
    // database, held elsewhere, makes the call time out instead of waiting for ever.
    const victimRole = await single(victim, "SELECT current_user");
    const holder = await owner.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [victimRole]);
      await expect(as(victim, "SELECT 1", { statementTimeoutMs: 300 })).rejects.toMatchObject({
        code: "agent_sql_timeout",
      });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
  });

  it("owns no more objects than its limit, so one statement cannot take a lock per relation without bound", async () => {
    const hoarder = await seedAgent(testDb.db);
    const few = { maxObjects: 3 };
    for (const name of ["r1", "r2"]) await as(hoarder, `CREATE TABLE ${name} (x int)`, few);
    await as(hoarder, "CREATE TYPE mood AS ENUM ('calm')", few);
    await expect(as(hoarder, "CREATE TABLE r3 (x int)", few)).rejects.toMatchObject({
      code: "agent_sql_quota",
      message: expect.stringMatching(/would own 4 objects .*over its limit of 3/),
    });
    await expect(as(hoarder, "CREATE TYPE temper AS ENUM ('hot')", few)).rejects.toMatchObject({
      code: "agent_sql_quota",
    });
    expect(await single(hoarder, "SELECT count(*)::int FROM pg_tables WHERE tablename = 'r3'")).toBe(0);
  });

  it("cannot reach the platform's database: no notification on its outbox channel, none of its tables", async () => {
    const listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    try {
      const heard: string[] = [];
      const sentinel = new Promise<void>((resolve) =>
        listener.on("notification", (message) => {
          heard.push(message.payload ?? "");
          if (message.payload === "sentinel") resolve();
        }),
      );
      await listener.query("LISTEN wl_outbox");
      await expect(as(attacker, "SELECT pg_notify('wl_outbox', 'forged')")).rejects.toMatchObject(
        permissionDenied,
      );
      await expect(as(attacker, "NOTIFY wl_outbox, 'forged'")).rejects.toMatchObject({
        code: "agent_sql_refused",
      });
      // A rule on its own table notifies as a side effect of an INSERT; in its own database, nobody hears.
      await as(attacker, "CREATE TABLE ping (x int)");
      await as(attacker, "CREATE RULE ping_notify AS ON INSERT TO ping DO ALSO NOTIFY wl_outbox, 'forged'");
      await as(attacker, "INSERT INTO ping VALUES (1)");
      // Notifications arrive in commit order: the sentinel, sent last, comes first only if nothing came before.
      await listener.query("NOTIFY wl_outbox, 'sentinel'");
      await sentinel;
      expect(heard).toEqual(["sentinel"]);
    } finally {
      await listener.end();
    }
    expect(
      await single(
        attacker,
        "SELECT count(*)::int FROM pg_class WHERE relname IN ('outbox', 'events', 'api_keys')",
      ),
    ).toBe(0);
    expect(await single(attacker, "SELECT current_database()")).not.toBe(
      new URL(testDb.url).pathname.slice(1),
    );
  });

  it("the runner role does not open with the app role's password", async () => {
    const appPassword = decodeURIComponent(new URL(testDb.appUrl).password);
    const runner = decodeURIComponent(new URL(testDb.agentSqlUrl).username);
    const stored = await owner.query<{ secret: string | null }>(
      "SELECT rolpassword AS secret FROM pg_authid WHERE rolname = $1",
      [runner],
    );
    const secret = stored.rows[0]?.secret ?? null;
    expect(secret).not.toBeNull();
    expect(scramVerifies(secret ?? "", appPassword)).toBe(false);
    expect(scramVerifies(secret ?? "", decodeURIComponent(new URL(testDb.agentSqlUrl).password))).toBe(true);
  });
});

/** Whether `password` matches a stored `SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey` (RFC 5802). */
function scramVerifies(stored: string, password: string): boolean {
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):/.exec(stored);
  if (match === null) return false;
  const [, iterations, salt, storedKey] = match;
  const salted = pbkdf2Sync(password, Buffer.from(salt ?? "", "base64"), Number(iterations), 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  return createHash("sha256").update(clientKey).digest("base64") === storedKey;
}
