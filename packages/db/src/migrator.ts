import { WakeloopError } from "@wakeloop/contracts";
import { type Kysely, Migrator } from "kysely";
import type { Database } from "./database";
import { MIGRATIONS } from "./migrations";

/**
 * Applies every pending migration and returns the names it applied (empty when up to date). Kysely
 * holds a lock while migrating, so services starting together do not race each other.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
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
