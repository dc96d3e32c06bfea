import { type Kysely, sql } from "kysely";
import type { Database } from "./database";
import { withTenant } from "./tenant-scope";

/*
 * The tool-call ledger (invariants 4 and 7). Calls enter it with the events that announce them and
 * settle with the events that carry their results, both through `append`'s `toolCalls`; this module
 * holds the ledger's other two moves.
 */

/** A call whose effects are outside Postgres is about to start: a crash from here is an unknown outcome. */
export async function markToolCallRunning(
  db: Kysely<Database>,
  tenantId: string,
  callId: string,
): Promise<void> {
  await sql`SELECT wl_tool_call_running(${tenantId}, ${callId})`.execute(db);
}

/** The calls of a session that started and never settled: their outcome is unknown. */
export async function startedToolCalls(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
): Promise<Set<string>> {
  const rows = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("tool_calls")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("session_id", "=", sessionId)
      .where("status", "=", "running")
      .execute(),
  );
  return new Set(rows.map((row) => row.id));
}
