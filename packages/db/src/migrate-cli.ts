import { parseArgs } from "node:util";
import { ensureAppRole } from "./app-role";
import { createDb } from "./create-db";
import { ensureDatabase, redactUrl } from "./database-admin";
import { migrateToLatest } from "./migrator";

// Entry point: `npx tsx packages/db/src/migrate-cli.ts [--url postgres://…] [--app-role wakeloop_app]`.
// Creates the database when it is missing, applies pending migrations, and with --app-role creates the
// role services connect as (row security binds it; see app-role.ts) and grants it this database.
// Its password, if the server needs one, comes from WAKELOOP_APP_PASSWORD, never from the command line.

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/wakeloop";

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { url: { type: "string" }, "app-role": { type: "string" } } });
  const url = values.url ?? process.env.DATABASE_URL ?? DEFAULT_URL;
  if (await ensureDatabase(url)) console.log(`created database ${redactUrl(url)}`);
  const db = createDb({ url, max: 1 });
  try {
    const applied = await migrateToLatest(db);
    for (const name of applied) console.log(`applied ${name}`);
    console.log(applied.length === 0 ? `${redactUrl(url)} is up to date` : `migrated ${redactUrl(url)}`);
    const appRole = values["app-role"];
    if (appRole !== undefined) {
      const password = process.env.WAKELOOP_APP_PASSWORD;
      await ensureAppRole(db, { name: appRole, ...(password ? { password } : {}) });
      console.log(`granted app role ${appRole}`);
    }
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
