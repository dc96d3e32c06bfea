import { randomBytes } from "node:crypto";
import {
  type AcquiredLease,
  acquireLease,
  agentSqlDatabaseUrl,
  agentSqlRunnerRole,
  createDb,
  createSession,
  dropDatabase,
  dropRole,
  ensureAgentSqlRoles,
  ensureAppRole,
  ensureDatabase,
  migrateAgentSqlDatabase,
  migrateToLatest,
  newId,
  openWake,
  type SessionRow,
} from "@wakeloop/db";
import { sql } from "kysely";

export interface TestDatabase {
  /** The migration owner's url: setup and assertions see every tenant's rows through it. */
  url: string;
  db: ReturnType<typeof createDb>;
  /**
   * The url services use: a role of this database's name that row-level security binds, as
   * `wakeloop_app` is in production. Queries through it see only the transaction's tenant.
   */
  appUrl: string;
  appDb: ReturnType<typeof createDb>;
  /**
   * The url of the agent SQL runner role (`<app role>_sql`, with a password of its own) on this
   * database's agent SQL database (`<name>_agents`): the harness' AGENT_SQL_DATABASE_URL.
   */
  agentSqlUrl: string;
  /** The migration owner's url on the agent SQL database, for setup and assertions. */
  agentSqlOwnerUrl: string;
  /** Closes the pools and drops this database, its agent SQL database and their roles (only these). */
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
  const agentSqlOwnerUrl = agentSqlDatabaseUrl(testUrl);
  const role = url.pathname.slice(1);
  const password = randomBytes(12).toString("hex");
  const runnerPassword = randomBytes(12).toString("hex");
  await ensureDatabase(testUrl);
  await ensureDatabase(agentSqlOwnerUrl);
  const db = createDb({ url: testUrl, max: options.max });
  const agentDb = createDb({ url: agentSqlOwnerUrl, max: 1 });
  const drop = async () => {
    // Agent SQL roles are cluster-wide: list this database's before it goes, then drop them too.
    const agentRoles = await sql<{ role_name: string }>`SELECT role_name FROM agent_sql_schemas`
      .execute(agentDb)
      .then((result) => result.rows.map((row) => row.role_name))
      .catch(() => []);
    await db.destroy();
    await agentDb.destroy();
    await dropDatabase(testUrl);
    await dropDatabase(agentSqlOwnerUrl);
    for (const name of [role, agentSqlRunnerRole(role), ...agentRoles]) {
      await dropRole(testUrl, name);
    }
  };
  try {
    await migrateToLatest(db);
    await ensureAppRole(db, { name: role, password });
    await migrateAgentSqlDatabase(agentDb);
    await ensureAgentSqlRoles(agentDb, { appRole: role, runnerPassword });
  } catch (error) {
    await drop();
    throw error;
  }
  const app = new URL(testUrl);
  app.username = role;
  app.password = password;
  const appUrl = app.toString();
  const runner = new URL(agentSqlOwnerUrl);
  runner.username = agentSqlRunnerRole(role);
  runner.password = runnerPassword;
  const agentSqlUrl = runner.toString();
  const appDb = createDb({ url: appUrl, max: options.max });
  return {
    url: testUrl,
    db,
    appUrl,
    appDb,
    agentSqlUrl,
    agentSqlOwnerUrl,
    async drop() {
      await appDb.destroy();
      await drop();
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

/** A session of the seeded agent with no parent, title or budget, and no environment unless given one. */
export function seedSession(
  db: TestDatabase["db"],
  seeded: SeededAgent,
  options: { environmentId?: string } = {},
): Promise<SessionRow> {
  return createSession(db, {
    tenantId: seeded.tenantId,
    agentId: seeded.agentId,
    agentVersion: seeded.agentVersion,
    environmentId: options.environmentId ?? null,
    parentSessionId: null,
    title: null,
    metadata: {},
    budget: { max_total_tokens: null },
  });
}

/** An environment of the seeded agent's tenant, for sessions that have a sandbox. */
export async function seedEnvironment(db: TestDatabase["db"], seeded: SeededAgent): Promise<string> {
  const id = newId("environment");
  await db
    .insertInto("environments")
    .values({ id, tenant_id: seeded.tenantId, name: "env", spec: JSON.stringify({ name: "env" }) })
    .execute();
  return id;
}

/** A new session of the seeded agent with one queued wake, not yet published. */
export async function seedWake(
  db: TestDatabase["db"],
  seeded: SeededAgent,
): Promise<{ sessionId: string; wakeId: string }> {
  const session = await seedSession(db, seeded);
  const wake = await openWake(db, {
    tenantId: seeded.tenantId,
    sessionId: session.id,
    reason: "user_message",
  });
  if (wake === null) throw new Error("a new session has no open wake");
  return { sessionId: session.id, wakeId: wake.id };
}

/** A new session of the seeded agent whose wake the worker `test` has leased, as a wake starts. */
export async function seedLease(
  testDb: TestDatabase,
  seeded: SeededAgent,
): Promise<{ sessionId: string; wakeId: string; lease: AcquiredLease }> {
  const { sessionId, wakeId } = await seedWake(testDb.db, seeded);
  const lease = await acquireLease(testDb.appDb, {
    tenantId: seeded.tenantId,
    sessionId,
    wakeId,
    workerId: "test",
    ttlMs: 30_000,
  });
  if (lease === null) throw new Error("a new wake's lease was refused");
  return { sessionId, wakeId, lease };
}
