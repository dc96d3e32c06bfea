import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

/*
 * One outbox row per commit (issue #9).
 *
 * `wl_append` (migration 0011) wrote one outbox row per event, and the relay deleted each of them
 * again: a durable tool step commits about five events, so five inserts and five deletes of heap and
 * index entries, their WAL and their vacuum, per step. Now a commit writes one row whose `messages`
 * are its events' bodies in seq order, built as before (the event row with its id, session, seq and
 * times merged in), so the published bytes do not change. A message's id (`Nats-Msg-Id`) is its
 * event's id, read from the body as its session and type are.
 *
 * `wl_outbox_relay` hands the rows out expanded, one row per message in commit and then seq order,
 * with the outbox row's id on each: the relay deletes a row once every message of it is acked, and
 * publishes a partly acked row whole again (the stream drops what it already holds by msg id). A round
 * takes whole rows while the messages before them number fewer than `max_messages`, so it holds at
 * most `max_messages` plus the rest of its last commit.
 *
 * Rows queued at the upgrade become rows of one message each; `down` expands every row back into one
 * row per message, in order.
 */
const appendFunction = (outboxInsert: string) => `CREATE OR REPLACE FUNCTION wl_append(
    p_tenant text, p_session text, p_fence bigint, p_expected_seq integer, p_state jsonb,
    p_events jsonb, p_headers jsonb, p_now timestamptz, p_consume_upto integer,
    p_tool_batch jsonb, p_tool_calls jsonb, p_settled jsonb, p_finish jsonb)
  RETURNS TABLE (outcome text, last_seq integer, lease_epoch bigint, state jsonb)
  LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
  DECLARE
    head record;
  BEGIN
    IF coalesce(current_setting('wakeloop.tenant_id', true), '') NOT IN ('', p_tenant) THEN
      RAISE EXCEPTION 'one transaction cannot act for two tenants' USING ERRCODE = 'WL001';
    END IF;
    PERFORM set_config('wakeloop.tenant_id', p_tenant, true);
    SELECT s.last_seq, s.lease_epoch, s.state INTO head FROM sessions s
      WHERE s.tenant_id = p_tenant AND s.id = p_session FOR UPDATE;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'not_found'::text, NULL::integer, NULL::bigint, NULL::jsonb;
      RETURN;
    END IF;
    IF p_fence IS NOT NULL AND head.lease_epoch <> p_fence THEN
      RETURN QUERY SELECT 'stale_fence'::text, head.last_seq, head.lease_epoch, NULL::jsonb;
      RETURN;
    END IF;
    IF p_expected_seq IS DISTINCT FROM head.last_seq THEN
      RETURN QUERY SELECT 'stale_head'::text, head.last_seq, head.lease_epoch, head.state;
      RETURN;
    END IF;

    IF p_consume_upto > 0 THEN
      UPDATE session_events e SET processed_at = p_now
        WHERE e.session_id = p_session AND e.type = 'user.message' AND e.processed_at IS NULL
          AND e.seq <= p_consume_upto;
    END IF;
    WITH events AS (
      SELECT * FROM jsonb_to_recordset(p_events) AS e (seq integer, id text, type text, body jsonb,
        processed_at text, created_at text, wake_id text, trace_id text)
    ), inserted AS (
      INSERT INTO session_events (session_id, seq, id, tenant_id, type, body, processed_at, created_at,
        wake_id, trace_id)
      SELECT p_session, e.seq, e.id, p_tenant, e.type, e.body, e.processed_at::timestamptz,
        e.created_at::timestamptz, e.wake_id, e.trace_id
      FROM events e
    )
    ${outboxInsert};
    UPDATE sessions s SET state = p_state, status = p_state->>'status',
        last_seq = (p_state->>'last_seq')::integer, updated_at = p_now
      WHERE s.tenant_id = p_tenant AND s.id = p_session;

    IF p_tool_batch IS NOT NULL THEN
      INSERT INTO tool_batches (id, tenant_id, session_id, wake_id, plan)
        VALUES (p_tool_batch->>'id', p_tenant, p_session, p_tool_batch->>'wake_id', p_tool_batch->'plan');
    END IF;
    IF p_tool_calls IS NOT NULL THEN
      INSERT INTO tool_calls (id, tenant_id, session_id, wake_id, name, input, status, idempotent,
          result, batch_id)
        SELECT c.id, p_tenant, p_session, c.wake_id, c.name, c.input, c.status, c.idempotent, c.result,
          c.batch_id
        FROM jsonb_to_recordset(p_tool_calls) AS c (id text, wake_id text, name text, input jsonb,
          status text, idempotent boolean, result jsonb, batch_id text);
    END IF;
    IF p_settled IS NOT NULL THEN
      UPDATE tool_calls t SET status = v.status, result = v.result, updated_at = p_now
        FROM jsonb_to_recordset(p_settled) AS v (id text, status text, result jsonb)
        WHERE t.id = v.id AND t.tenant_id = p_tenant;
    END IF;
    IF p_finish IS NOT NULL THEN
      UPDATE wakes w SET status = p_finish->>'status', lease_expires_at = NULL, finished_at = now()
        WHERE w.id = p_finish->>'wake_id' AND w.tenant_id = p_tenant AND w.status = 'running'
          AND w.lease_epoch = (p_finish->>'epoch')::bigint;
    END IF;
    RETURN QUERY SELECT 'appended'::text, (p_state->>'last_seq')::integer, head.lease_epoch, NULL::jsonb;
  END
$$`;

// The event as published: its row's columns merged into its body.
const MESSAGE_BODY = `e.body || jsonb_build_object('id', e.id, 'session_id', p_session,
        'seq', e.seq, 'processed_at', e.processed_at, 'created_at', e.created_at, 'wake_id', e.wake_id,
        'trace_id', e.trace_id)`;

const RELAY_RESULT = `RETURNS TABLE (id bigint, tenant_id text, msg_id text, session_id text, type text, body text,
    headers jsonb, age_ms float8)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "ALTER TABLE outbox ADD COLUMN messages jsonb",
    "UPDATE outbox SET messages = jsonb_build_array(body)",
    // An empty row would never be acked, so never deleted.
    `ALTER TABLE outbox ALTER COLUMN messages SET NOT NULL,
      ADD CONSTRAINT outbox_messages_check CHECK (jsonb_typeof(messages) = 'array' AND jsonb_array_length(messages) > 0),
      DROP COLUMN msg_id, DROP COLUMN body`,
    // No row when the append has no events, as before (jsonb_agg of nothing is one null).
    appendFunction(`INSERT INTO outbox (tenant_id, messages, headers)
      SELECT p_tenant, jsonb_agg(${MESSAGE_BODY} ORDER BY e.seq), p_headers
      FROM events e HAVING count(*) > 0`),
    "DROP FUNCTION wl_outbox_relay(bigint[], integer)",
    // PL/pgSQL, not SQL as before: a SQL function plans its statements on every call, and planning this
    // one cost more than running it (~0.1 ms a round); PL/pgSQL keeps the plans for the relay's connection.
    `CREATE FUNCTION wl_outbox_relay(acked bigint[], max_messages integer) ${RELAY_RESULT}
      LANGUAGE plpgsql VOLATILE ${DEFINER} AS $$
      BEGIN
        DELETE FROM outbox d WHERE d.id = ANY (acked);
        RETURN QUERY SELECT o.id, o.tenant_id, m.body->>'id', m.body->>'session_id', m.body->>'type', m.body::text,
          o.headers, (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
        FROM (
          SELECT r.id, r.tenant_id, r.messages, r.headers, r.created_at,
            sum(jsonb_array_length(r.messages)) OVER (ORDER BY r.id ROWS UNBOUNDED PRECEDING) AS upto
          FROM outbox r ORDER BY r.id LIMIT max_messages
        ) o, jsonb_array_elements(o.messages) WITH ORDINALITY AS m (body, n)
        WHERE o.upto - jsonb_array_length(o.messages) < max_messages
        ORDER BY o.id, m.n;
      END
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_relay(bigint[], integer) FROM PUBLIC",
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE outbox ADD COLUMN msg_id text, ADD COLUMN body jsonb,
      DROP CONSTRAINT outbox_messages_check, ALTER COLUMN messages DROP NOT NULL`,
    `INSERT INTO outbox (tenant_id, msg_id, body, headers, created_at)
      SELECT o.tenant_id, m.body->>'id', m.body, o.headers, o.created_at
      FROM outbox o, jsonb_array_elements(o.messages) WITH ORDINALITY AS m (body, n)
      ORDER BY o.id, m.n`,
    "DELETE FROM outbox WHERE messages IS NOT NULL",
    "ALTER TABLE outbox DROP COLUMN messages, ALTER COLUMN msg_id SET NOT NULL, ALTER COLUMN body SET NOT NULL",
    appendFunction(`INSERT INTO outbox (tenant_id, msg_id, body, headers)
      SELECT p_tenant, e.id, ${MESSAGE_BODY}, p_headers
      FROM events e ORDER BY e.seq`),
    "DROP FUNCTION wl_outbox_relay(bigint[], integer)",
    `CREATE FUNCTION wl_outbox_relay(acked bigint[], max_rows integer) ${RELAY_RESULT}
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      DELETE FROM outbox WHERE id = ANY ($1);
      SELECT o.id, o.tenant_id, o.msg_id, o.body->>'session_id', o.body->>'type', o.body::text, o.headers,
        (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
      FROM outbox o ORDER BY o.id LIMIT $2
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_relay(bigint[], integer) FROM PUBLIC",
  ]);
}
