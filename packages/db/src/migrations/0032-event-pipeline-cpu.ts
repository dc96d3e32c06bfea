import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

/*
 * Less CPU per event on the event pipeline (issue #9).
 *
 * The outbox relay's round in one statement: `wl_outbox_relay` deletes the rows of the round
 * just acked by the stream and returns the next batch, where the relay used to call `wl_outbox_batch`
 * and `wl_outbox_delete` (migrations 0009, 0011) one round trip each. The relay calls it again as soon as
 * its publishes are acked, so no acked row waits longer for its deletion than before. The second
 * statement of the function sees the first's deletion, so the batch never holds a deleted row.
 *
 * The body comes as the text of its JSON, with the event's session and type beside it to build the
 * subject: the relay sends those bytes as they are, where it parsed and serialized every event again.
 *
 * The event index's GIN indexes (migration 0017) take new entries into a pending list of at most
 * 128 kB, merged into the index in bulk, instead of one index update per entry: about half the
 * indexer's insert CPU, and the indexer inserts two events of every tool step. Migration 0012 turned
 * the pending list off so that searches would not re-read up to 4 MB of unmerged entries after a burst
 * of writes; at 128 kB a search re-reads at most that. Measured on 20 000 rows plus 8 000 inserted
 * four a statement: insert CPU 0.28 → 0.12–0.16 ms per event, and 400 text and substring searches no
 * slower. The memory entries' indexes, written per memory tool call and not per step, keep no pending
 * list.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_outbox_relay(acked bigint[], max_rows integer)
      RETURNS TABLE (id bigint, tenant_id text, msg_id text, session_id text, type text, body text,
        headers jsonb, age_ms float8)
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      DELETE FROM outbox WHERE id = ANY ($1);
      SELECT o.id, o.tenant_id, o.msg_id, o.body->>'session_id', o.body->>'type', o.body::text, o.headers,
        (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
      FROM outbox o ORDER BY o.id LIMIT $2
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_relay(bigint[], integer) FROM PUBLIC",
    "DROP FUNCTION wl_outbox_batch(integer)",
    "DROP FUNCTION wl_outbox_delete(bigint[])",
    "ALTER INDEX session_event_index_tsv_idx SET (fastupdate = on, gin_pending_list_limit = 128)",
    "ALTER INDEX session_event_index_trgm_idx SET (fastupdate = on, gin_pending_list_limit = 128)",
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "ALTER INDEX session_event_index_tsv_idx SET (fastupdate = off)",
    "ALTER INDEX session_event_index_tsv_idx RESET (gin_pending_list_limit)",
    "ALTER INDEX session_event_index_trgm_idx SET (fastupdate = off)",
    "ALTER INDEX session_event_index_trgm_idx RESET (gin_pending_list_limit)",
    // Turning the pending list off does not merge what it holds, which searches would re-read until a vacuum.
    "SELECT gin_clean_pending_list('session_event_index_tsv_idx')",
    "SELECT gin_clean_pending_list('session_event_index_trgm_idx')",
    `CREATE FUNCTION wl_outbox_batch(max_rows integer)
      RETURNS TABLE (id bigint, tenant_id text, msg_id text, body jsonb, headers jsonb, age_ms float8)
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      SELECT o.id, o.tenant_id, o.msg_id, o.body, o.headers,
        (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
      FROM outbox o ORDER BY o.id LIMIT $1
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_batch(integer) FROM PUBLIC",
    `CREATE FUNCTION wl_outbox_delete(ids bigint[]) RETURNS void LANGUAGE sql VOLATILE ${DEFINER} AS $$
      DELETE FROM outbox WHERE id = ANY ($1)
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_delete(bigint[]) FROM PUBLIC",
    "DROP FUNCTION wl_outbox_relay(bigint[], integer)",
  ]);
}
