import { parseArgs } from "node:util";
import { createDb } from "./create-db";
import { ensureDatabase, redactUrl } from "./database-admin";
import { migrateToLatest } from "./migrator";

// Entry point: `npx tsx packages/db/src/migrate-cli.ts [--url postgres://…]`. Creates the database
// when it is missing, then applies pending migrations and prints what it did.

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/wakeloop";

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { url: { type: "string" } } });
  const url = values.url ?? process.env.DATABASE_URL ?? DEFAULT_URL;
  if (await ensureDatabase(url)) console.log(`created database ${redactUrl(url)}`);
  const db = createDb({ url, max: 1 });
  try {
    const applied = await migrateToLatest(db);
    for (const name of applied) console.log(`applied ${name}`);
    console.log(applied.length === 0 ? `${redactUrl(url)} is up to date` : `migrated ${redactUrl(url)}`);
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
