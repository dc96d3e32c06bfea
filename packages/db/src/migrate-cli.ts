import { parseArgs } from "node:util";
import { WakeloopError } from "@wakeloop/contracts";
import { agentSqlDatabaseUrl } from "./agent-sql";
import { ensureAgentSqlRoles, ensureAppRole } from "./app-role";
import { createDb } from "./create-db";
import { ensureDatabase, redactUrl } from "./database-admin";
import { migrateAgentSqlDatabase, migrateToLatest } from "./migrator";

// Entry point: `npx tsx packages/db/src/migrate-cli.ts [--url postgres://…] [--agent-sql-url postgres://…]
// [--app-role wakeloop_app]`. Creates the platform's database and the agent SQL database (db_sql's, by
// default `<name>_agents` on the same server) when they are missing and applies each one's pending
// migrations. With --app-role it creates the role services connect as (row security binds it; see
// app-role.ts) and grants it the platform's database, and creates the agent SQL runner role
// (`<app role>_sql`) and grants both roles the agent SQL database. Passwords, if the server needs them,
// come from WAKELOOP_APP_PASSWORD and WAKELOOP_AGENT_SQL_PASSWORD (the runner's own), never from the
// command line.

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/wakeloop";

async function migrate(
  url: string,
  apply: (db: ReturnType<typeof createDb>) => Promise<string[]>,
  grant: (db: ReturnType<typeof createDb>) => Promise<void>,
): Promise<void> {
  if (await ensureDatabase(url)) console.log(`created database ${redactUrl(url)}`);
  const db = createDb({ url, max: 1 });
  try {
    const applied = await apply(db);
    for (const name of applied) console.log(`applied ${name}`);
    console.log(applied.length === 0 ? `${redactUrl(url)} is up to date` : `migrated ${redactUrl(url)}`);
    await grant(db);
  } finally {
    await db.destroy();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { url: { type: "string" }, "agent-sql-url": { type: "string" }, "app-role": { type: "string" } },
  });
  const url = values.url ?? process.env.DATABASE_URL ?? DEFAULT_URL;
  const appRole = values["app-role"];
  const appPassword = process.env.WAKELOOP_APP_PASSWORD;
  const runnerPassword = process.env.WAKELOOP_AGENT_SQL_PASSWORD;
  // The runner takes agents' statements: it must not open with the password of the role that reads
  // every tenant's rows (issue #30 item 7a).
  if (appRole !== undefined && appPassword && (!runnerPassword || runnerPassword === appPassword)) {
    throw new WakeloopError(
      "app_role_unsafe",
      "with WAKELOOP_APP_PASSWORD set, set WAKELOOP_AGENT_SQL_PASSWORD too: the agent SQL runner's own password, not the app role's",
    );
  }
  await migrate(url, migrateToLatest, async (db) => {
    if (appRole === undefined) return;
    await ensureAppRole(db, { name: appRole, ...(appPassword ? { password: appPassword } : {}) });
    console.log(`granted app role ${appRole}`);
  });
  await migrate(values["agent-sql-url"] ?? agentSqlDatabaseUrl(url), migrateAgentSqlDatabase, async (db) => {
    if (appRole === undefined) return;
    await ensureAgentSqlRoles(db, { appRole, ...(runnerPassword ? { runnerPassword } : {}) });
    console.log(`granted the agent SQL database to ${appRole} and its runner role`);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
