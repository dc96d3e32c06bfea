import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

/*
 * The outbox relay's round in one statement (issue #9): `wl_outbox_relay` deletes the rows of the round
 * just acked by the stream and returns the next batch, where the relay used to call `wl_outbox_batch`
 * and `wl_outbox_delete` (migrations 0009, 0011) one round trip each. The relay calls it again as soon as
 * its publishes are acked, so no acked row waits longer for its deletion than before. The second
 * statement of the function sees the first's deletion, so the batch never holds a deleted row.
 *
 * The body comes as the text of its JSON, with the event's session and type beside it to build the
 * subject: the relay sends those bytes as they are, where it parsed and serialized every event again.
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
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
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
