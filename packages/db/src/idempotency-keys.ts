import { type Kysely, sql } from "kysely";
import type { Database } from "./database";

/**
 * Forgets `Idempotency-Key` records older than the window in which a client may retry. After it, the
 * same key is a new request; the events it appended stay, so nothing of the session is lost. Spans
 * every tenant, so it runs through the definer function that does only this.
 */
export async function expireIdempotencyKeys(db: Kysely<Database>, now: Date, ttlMs: number): Promise<number> {
  const before = new Date(now.getTime() - ttlMs);
  const result = await sql<{
    expired: number;
  }>`SELECT wl_expire_idempotency_keys(${before}) AS expired`.execute(db);
  return result.rows[0]?.expired ?? 0;
}
