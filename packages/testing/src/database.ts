import { randomBytes } from "node:crypto";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest, newId } from "@wakeloop/db";

export interface TestDatabase {
  url: string;
  db: ReturnType<typeof createDb>;
  /** Closes the pool and drops this database (only this one). */
  drop(): Promise<void>;
}

const DEFAULT_SERVER_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * A fresh, fully migrated database named `wl_test_<random>` for one test file, on the server of
 * `WL_TEST_PG_URL` (test tooling may read the environment; packages may not).
 */
export async function createTestDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const url = new URL(process.env.WL_TEST_PG_URL ?? DEFAULT_SERVER_URL);
  url.pathname = `/wl_test_${randomBytes(6).toString("hex")}`;
  const testUrl = url.toString();
  await ensureDatabase(testUrl);
  const db = createDb({ url: testUrl, max: options.max });
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    await dropDatabase(testUrl);
    throw error;
  }
  return {
    url: testUrl,
    db,
    async drop() {
      await db.destroy();
      await dropDatabase(testUrl);
    },
  };
}

export interface SeededAgent {
  tenantId: string;
  agentId: string;
  agentVersion: number;
}

/** A tenant with one agent at version 1, the rows a session needs to exist. */
export async function seedAgent(db: TestDatabase["db"]): Promise<SeededAgent> {
  const tenantId = newId("tenant");
  const agentId = newId("agent");
  const spec = { name: "test agent", model: { provider: "openai_compatible", id: "fake-model" } };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("tenants").values({ id: tenantId, name: "test tenant" }).execute();
    await trx
      .insertInto("agents")
      .values({ id: agentId, tenant_id: tenantId, name: spec.name, latest_version: 1 })
      .execute();
    await trx
      .insertInto("agent_versions")
      .values({ agent_id: agentId, version: 1, tenant_id: tenantId, spec: JSON.stringify(spec) })
      .execute();
  });
  return { tenantId, agentId, agentVersion: 1 };
}
