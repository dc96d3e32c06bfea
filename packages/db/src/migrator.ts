import { WakeloopError } from "@wakeloop/contracts";
import { type Kysely, type Migration, Migrator, type MigratorProps } from "kysely";
import { AGENT_SQL_MIGRATIONS } from "./agent-sql-migrations";
import type { Database } from "./database";
import { MIGRATIONS } from "./migrations";

/**
 * Applies every pending migration and returns the names it applied (empty when up to date). Kysely
 * holds a lock while migrating, so services starting together do not race each other.
 */
export function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  return applyMigrations(db, MIGRATIONS);
}

/** The same for the agent SQL database (agent-sql-migrations/), a database apart from the platform's. */
export function migrateAgentSqlDatabase(db: MigratorProps["db"]): Promise<string[]> {
  return applyMigrations(db, AGENT_SQL_MIGRATIONS);
}

async function applyMigrations(
  db: MigratorProps["db"],
  migrations: Readonly<Record<string, Migration>>,
): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((result) => result.status === "Error")?.migrationName;
    throw new WakeloopError("migration_failed", `migration ${failed ?? "(setup)"} failed`, {
      cause: error,
      details: { results },
    });
  }
  return results.filter((result) => result.status === "Success").map((result) => result.migrationName);
}
