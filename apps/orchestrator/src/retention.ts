import type { Database } from "@wakeloop/db";
import type { Kysely } from "kysely";

/**
 * Forgets `Idempotency-Key` records older than the window in which a client may retry. After it, the
 * same key is a new request; the events it appended stay, so nothing of the session is lost.
 */
export async function expireIdempotencyKeys(db: Kysely<Database>, now: Date, ttlMs: number): Promise<number> {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where("created_at", "<", new Date(now.getTime() - ttlMs))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
