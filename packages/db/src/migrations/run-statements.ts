import { type Kysely, sql } from "kysely";

/** Runs DDL one statement at a time, so no migration relies on multi-statement query support. */
export async function runStatements(db: Kysely<unknown>, statements: readonly string[]): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
