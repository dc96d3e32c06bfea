import pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase, seedAgent } from "./database";

async function databaseExists(url: string): Promise<boolean> {
  const name = new URL(url).pathname.slice(1);
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    return (await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe("createTestDatabase", () => {
  it("gives each caller its own migrated database and agent SQL database and drops only those", async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    try {
      expect(a.url).not.toBe(b.url);
      expect(new URL(a.url).pathname).toMatch(/^\/wl_test_[0-9a-f]{12}$/);
      const seeded = await seedAgent(a.db);
      const tenants = await a.db.selectFrom("tenants").select("id").execute();
      expect(tenants).toEqual([{ id: seeded.tenantId }]);
      expect(await b.db.selectFrom("tenants").select("id").execute()).toEqual([]);
    } finally {
      await a.drop();
    }
    expect(await databaseExists(a.url)).toBe(false);
    expect(await databaseExists(a.agentSqlOwnerUrl)).toBe(false);
    expect(await databaseExists(b.url)).toBe(true);
    expect(await databaseExists(b.agentSqlOwnerUrl)).toBe(true);
    await b.drop();
    expect(await databaseExists(b.url)).toBe(false);
    expect(await databaseExists(b.agentSqlOwnerUrl)).toBe(false);
  });
});
