import { type AgentSqlLimits, type AgentSqlResult, describeAgentSchema, runAgentSql } from "@wakeloop/db";
import { createTestDatabase, seedAgent, type TestDatabase } from "@wakeloop/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/*
 * Issue #13's db_sql, attacked from one agent's database against another tenant's agent (docs/security.md,
 * "Agent SQL"). The attacker sees its own schema only through information_schema and db_schema, and
 * cannot read, write, call or drop anything of the victim's, by name or through a definer of its own.
 * What Postgres shows every role regardless (object names and definitions through pg_catalog and oid
 * lookups) is documented there, not hidden: no grant can take it away.
 */

let testDb: TestDatabase;
let pool: pg.Pool;
let attacker: { tenantId: string; agentId: string };
let victim: { tenantId: string; agentId: string };
let victimSchema: string;

const limits: AgentSqlLimits = {
  statementTimeoutMs: 30_000,
  maxRows: 1_000,
  quotaBytes: 100 * 1024 * 1024,
  maxObjects: 500,
};

const asAttacker = (sql: string) => runAgentSql(pool, attacker, { sql, params: [] }, limits);
const asVictim = (sql: string) => runAgentSql(pool, victim, { sql, params: [] }, limits);

function flat(result: AgentSqlResult): unknown[] {
  return result.kind === "rows" ? result.rows.flat() : [];
}

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 2 });
  pool = new pg.Pool({ connectionString: testDb.agentSqlUrl, max: 2 });
  const a = await seedAgent(testDb.db);
  const v = await seedAgent(testDb.db);
  attacker = { tenantId: a.tenantId, agentId: a.agentId };
  victim = { tenantId: v.tenantId, agentId: v.agentId };
  await asVictim("CREATE TABLE payroll (name text, salary int)");
  await asVictim("INSERT INTO payroll VALUES ('ada', 120000), ('bob', 90000)");
  await asVictim("CREATE VIEW payroll_total AS SELECT sum(salary) AS total FROM payroll");
  await asAttacker("CREATE TABLE mine (x int)");
  victimSchema = String(flat(await asVictim("SELECT current_user"))[0]);
});
afterAll(async () => {
  await pool?.end();
  await testDb?.drop();
});

describe("agent SQL against another tenant's agent", () => {
  it("lists only its own schema and tables through information_schema and db_schema", async () => {
    expect(flat(await asAttacker("SELECT schema_name FROM information_schema.schemata")).sort()).toEqual(
      [...flat(await asAttacker("SELECT current_schema()")), "information_schema", "pg_catalog"].sort(),
    );
    const listings = [
      "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
      "SELECT table_schema || '.' || table_name || '.' || column_name FROM information_schema.columns WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
      "SELECT table_name || view_definition FROM information_schema.views WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    ];
    for (const listing of listings) {
      const seen = flat(await asAttacker(listing)).join("\n");
      expect(seen).not.toMatch(/payroll|salary/);
      expect(seen).not.toContain(victimSchema);
    }
    expect(flat(await asAttacker(listings[0] ?? ""))).toEqual([expect.stringMatching(/\.mine$/)]);
    expect((await describeAgentSchema(pool, attacker, limits)).map((table) => table.name)).toEqual(["mine"]);
    // No agent has a function whose body the catalog would show: no language is granted to agents.
    await expect(
      asVictim(
        "CREATE FUNCTION payroll_of(n text) RETURNS int LANGUAGE sql AS 'SELECT salary FROM payroll WHERE name = n'",
      ),
    ).rejects.toMatchObject({ message: expect.stringMatching(/permission denied for language sql/) });
  });

  it("cannot read, write, call or drop the victim's objects, even knowing their names", async () => {
    const refused = [
      `SELECT * FROM ${victimSchema}.payroll`,
      `SELECT * FROM ${victimSchema}.payroll_total`,
      `SELECT '${victimSchema}.payroll'::regclass`,
      `INSERT INTO ${victimSchema}.payroll VALUES ('eve', 1)`,
      `DROP TABLE ${victimSchema}.payroll`,
      `ALTER TABLE ${victimSchema}.payroll ADD COLUMN x int`,
      `CREATE TABLE ${victimSchema}.planted (x int)`,
      `DROP SCHEMA ${victimSchema} CASCADE`,
    ];
    for (const statement of refused) {
      await expect(asAttacker(statement), statement).rejects.toMatchObject({
        code: "agent_sql_error",
        message: expect.stringMatching(/permission denied|must be owner/),
      });
    }
    // A definer function of the attacker's own runs as the attacker: it gains nothing.
    await asAttacker(
      `CREATE FUNCTION peek() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS 'SELECT count(*) FROM ${victimSchema}.payroll'`,
    ).then(
      () => expect.unreachable("a function over a schema it cannot use was created"),
      (error: unknown) =>
        expect(error).toMatchObject({ message: expect.stringMatching(/permission denied/) }),
    );
    // The victim's rows are as they were.
    expect(await asVictim("SELECT name, salary FROM payroll ORDER BY name")).toMatchObject({
      rows: [
        ["ada", 120000],
        ["bob", 90000],
      ],
    });
  });
});
