import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/*
 * Spine v2 (issue #9): the writes of the session loop become one round trip each.
 *
 * `wl_append` is the fenced append as one server-side call: it scopes the transaction to the tenant,
 * locks the session row, checks the lease epoch and that the caller folded its events onto the
 * session's current head, then writes events, outbox rows, consumed messages, the projection, the
 * tool-call ledger and the wake's end. The projection is folded by the caller (the reducer is
 * TypeScript and stays the one definition of it); a caller whose head is stale gets the current one
 * back and folds again. Nothing is written unless every check passes.
 *
 * Functions run as their caller (no definer rights): row security applies as for any query of the
 * app role. Each refuses to run in a transaction already scoped to another tenant.
 *
 * Outbox rows no longer carry a subject: the relay builds it from the row's tenant and event through
 * the bus's subject layout, so that layout lives in one place. The outbox body is built here from the
 * event row, so a step sends each event's JSON once.
 */

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

const SCOPE = `
  IF coalesce(current_setting('wakeloop.tenant_id', true), '') NOT IN ('', p_tenant) THEN
    RAISE EXCEPTION 'one transaction cannot act for two tenants' USING ERRCODE = 'WL001';
  END IF;
  PERFORM set_config('wakeloop.tenant_id', p_tenant, true);`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "ALTER TABLE outbox DROP COLUMN topic",
    "DROP FUNCTION wl_outbox_batch(integer)",
    `CREATE FUNCTION wl_outbox_batch(max_rows integer)
      RETURNS TABLE (id bigint, tenant_id text, msg_id text, body jsonb, headers jsonb, age_ms float8)
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      SELECT o.id, o.tenant_id, o.msg_id, o.body, o.headers,
        (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
      FROM outbox o ORDER BY o.id LIMIT $1
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_batch(integer) FROM PUBLIC",
    `CREATE FUNCTION wl_append(
        p_tenant text, p_session text, p_fence bigint, p_expected_seq integer, p_state jsonb,
        p_events jsonb, p_headers jsonb, p_now timestamptz, p_consume_upto integer,
        p_tool_batch jsonb, p_tool_calls jsonb, p_settled jsonb, p_finish jsonb)
      RETURNS TABLE (outcome text, last_seq integer, lease_epoch bigint, state jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        head record;
      BEGIN
        ${SCOPE}
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
        INSERT INTO outbox (tenant_id, msg_id, body, headers)
          SELECT p_tenant, e.id, e.body || jsonb_build_object('id', e.id, 'session_id', p_session,
            'seq', e.seq, 'processed_at', e.processed_at, 'created_at', e.created_at, 'wake_id', e.wake_id,
            'trace_id', e.trace_id), p_headers
          FROM events e ORDER BY e.seq;
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
    $$`,
    // Takes a queued wake under a new epoch and returns what the wake starts from: the session row,
    // its pinned agent version's spec and its environment's spec.
    `CREATE FUNCTION wl_acquire_lease(p_tenant text, p_session text, p_wake text, p_worker text,
        p_ttl_ms integer)
      RETURNS TABLE (id text, tenant_id text, agent_id text, agent_version integer, environment_id text,
        parent_session_id text, status text, state jsonb, last_seq integer, lease_epoch bigint,
        created_at timestamptz, updated_at timestamptz, agent_spec jsonb, environment_spec jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        epoch bigint;
      BEGIN
        ${SCOPE}
        SELECT s.lease_epoch + 1 INTO epoch FROM sessions s
          WHERE s.tenant_id = p_tenant AND s.id = p_session FOR UPDATE;
        IF NOT FOUND THEN RETURN; END IF;
        UPDATE wakes w SET status = 'running', worker_id = p_worker, lease_epoch = epoch,
            lease_expires_at = now() + p_ttl_ms * interval '1 millisecond', started_at = now()
          WHERE w.id = p_wake AND w.tenant_id = p_tenant AND w.session_id = p_session AND w.status = 'queued';
        IF NOT FOUND THEN RETURN; END IF;
        RETURN QUERY
          UPDATE sessions s SET lease_epoch = epoch
          FROM agent_versions v
          WHERE s.tenant_id = p_tenant AND s.id = p_session
            AND v.tenant_id = s.tenant_id AND v.agent_id = s.agent_id AND v.version = s.agent_version
          RETURNING s.id, s.tenant_id, s.agent_id, s.agent_version, s.environment_id, s.parent_session_id,
            s.status, s.state, s.last_seq, s.lease_epoch, s.created_at, s.updated_at, v.spec,
            (SELECT e.spec FROM environments e WHERE e.tenant_id = s.tenant_id AND e.id = s.environment_id);
      END
    $$`,
    // A page of a session's events after a seq: one round trip for the reads of the session loop.
    `CREATE FUNCTION wl_session_events(p_tenant text, p_session text, p_after integer, p_limit integer)
      RETURNS SETOF session_events
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        RETURN QUERY SELECT * FROM session_events e
          WHERE e.tenant_id = p_tenant AND e.session_id = p_session AND e.seq > p_after
          ORDER BY e.seq LIMIT p_limit;
      END
    $$`,
    // The session row as its tenant sees it: one round trip for the loop's and the API's reads.
    `CREATE FUNCTION wl_session(p_tenant text, p_session text) RETURNS SETOF sessions
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        RETURN QUERY SELECT * FROM sessions s WHERE s.tenant_id = p_tenant AND s.id = p_session;
      END
    $$`,
    // Marks as published the oldest held wakes of a tenant, as many as its in-flight limit has room
    // for, under a per-tenant advisory lock so replicas together never go past the limit.
    `CREATE FUNCTION wl_claim_wakes(p_tenant text, p_max_in_flight integer) RETURNS SETOF wakes
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        room integer;
      BEGIN
        ${SCOPE}
        PERFORM pg_advisory_xact_lock(hashtextextended('wl.wake_dispatch.' || p_tenant, 0));
        SELECT p_max_in_flight - count(*) INTO room FROM wakes w
          WHERE w.tenant_id = p_tenant AND (w.status = 'running' OR (w.status = 'queued' AND w.published_at IS NOT NULL));
        IF room <= 0 THEN RETURN; END IF;
        RETURN QUERY WITH claimed AS (
            UPDATE wakes w SET published_at = now()
            WHERE w.id IN (
              SELECT h.id FROM wakes h
              WHERE h.tenant_id = p_tenant AND h.status = 'queued' AND h.published_at IS NULL
              ORDER BY h.due_at, h.created_at, h.id LIMIT room)
            RETURNING w.*)
          SELECT * FROM claimed c ORDER BY c.due_at, c.created_at, c.id;
      END
    $$`,
    // Opens a queued wake unless the session has an open one, then claims what its tenant may publish.
    `CREATE FUNCTION wl_open_wake(p_tenant text, p_session text, p_wake text, p_reason text,
        p_due_at timestamptz, p_max_in_flight integer)
      RETURNS TABLE (opened boolean, wake jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        INSERT INTO wakes (id, tenant_id, session_id, status, reason, attempt, due_at)
          VALUES (p_wake, p_tenant, p_session, 'queued', p_reason, 1, p_due_at)
          ON CONFLICT (session_id) WHERE status IN ('queued', 'running') DO NOTHING;
        IF NOT FOUND THEN RETURN; END IF;
        RETURN QUERY SELECT true, NULL::jsonb
          UNION ALL SELECT false, to_jsonb(c) FROM wl_claim_wakes(p_tenant, p_max_in_flight) c;
      END
    $$`,
    // The tenant's sealed key for a provider, read once per wake on the dispatch path.
    `CREATE FUNCTION wl_provider_credential(p_tenant text, p_provider text)
      RETURNS TABLE (key_id text, sealed bytea)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        RETURN QUERY SELECT c.key_id, c.sealed FROM provider_credentials c
          WHERE c.tenant_id = p_tenant AND c.provider = p_provider;
      END
    $$`,
    // A non-idempotent call is about to start: from here a crash leaves an unknown outcome.
    `CREATE FUNCTION wl_tool_call_running(p_tenant text, p_call text) RETURNS void
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        UPDATE tool_calls t SET status = 'running', updated_at = now()
          WHERE t.id = p_call AND t.tenant_id = p_tenant;
      END
    $$`,
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "DROP FUNCTION wl_provider_credential(text, text)",
    "DROP FUNCTION wl_open_wake(text, text, text, text, timestamptz, integer)",
    "DROP FUNCTION wl_claim_wakes(text, integer)",
    "DROP FUNCTION wl_session(text, text)",
    "DROP FUNCTION wl_tool_call_running(text, text)",
    "DROP FUNCTION wl_session_events(text, text, integer, integer)",
    "DROP FUNCTION wl_acquire_lease(text, text, text, text, integer)",
    "DROP FUNCTION wl_append(text, text, bigint, integer, jsonb, jsonb, jsonb, timestamptz, integer, jsonb, jsonb, jsonb, jsonb)",
    "ALTER TABLE outbox ADD COLUMN topic text",
    `UPDATE outbox SET topic = 'evt.' || tenant_id || '.' || (body->>'session_id') || '.' || (body->>'type')`,
    "ALTER TABLE outbox ALTER COLUMN topic SET NOT NULL",
    "DROP FUNCTION wl_outbox_batch(integer)",
    `CREATE FUNCTION wl_outbox_batch(max_rows integer)
      RETURNS TABLE (id bigint, topic text, msg_id text, body jsonb, headers jsonb, age_ms float8)
      LANGUAGE sql VOLATILE ${DEFINER} AS $$
      SELECT o.id, o.topic, o.msg_id, o.body, o.headers,
        (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8
      FROM outbox o ORDER BY o.id LIMIT $1
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_outbox_batch(integer) FROM PUBLIC",
  ]);
}
