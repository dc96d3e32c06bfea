import { randomBytes } from "node:crypto";
import {
  type AcquiredLease,
  acquireLease,
  agentSqlDatabaseUrl,
  agentSqlRunnerRole,
  copyDatabase,
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
/** Names the migrated database createTestDatabase copies; test/global-setup.ts sets it for a vitest run. */
export const TEMPLATE_DATABASE_ENV = "WL_TEST_PG_TEMPLATE";

function serverUrl(name: string): string {
  const url = new URL(process.env.WL_TEST_PG_URL ?? DEFAULT_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A migrated database `wl_template_<random>` for createTestDatabase to copy (about 0.5 s) instead of
 * migrating each test database (about 3 s). One per test run: its random name keeps runs from other
 * clones apart, and nothing stays connected to it, since a copy fails while anyone is.
 */
export async function createTemplateDatabase(): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `wl_template_${randomBytes(6).toString("hex")}`;
  const url = serverUrl(name);
  await ensureDatabase(url);
  const db = createDb({ url, max: 1 });
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    await dropDatabase(url);
    throw error;
  }
  await db.destroy();
  return { name, drop: () => dropDatabase(url) };
}

/**
 * A fresh, fully migrated database named `wl_test_<random>` for one test file, on the server of
 * `WL_TEST_PG_URL` (test tooling may read the environment; packages may not): a copy of the run's
 * template when `WL_TEST_PG_TEMPLATE` names one, else migrated here (benchmarks, scripts).
 */
export async function createTestDatabase(options: { max?: number } = {}): Promise<TestDatabase> {
  const role = `wl_test_${randomBytes(6).toString("hex")}`;
  const testUrl = serverUrl(role);
  const agentSqlOwnerUrl = agentSqlDatabaseUrl(testUrl);
  const password = randomBytes(12).toString("hex");
  const runnerPassword = randomBytes(12).toString("hex");
  const template = process.env[TEMPLATE_DATABASE_ENV];
  if (template === undefined) await ensureDatabase(testUrl);
  else await copyDatabase(template, testUrl);
  // The agent SQL database holds no platform table: made and migrated here, it is quick.
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
    if (template === undefined) await migrateToLatest(db);
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
