import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/*
 * A client's events and their wake in one statement (issue #9).
 *
 * The gateway appended a client's batch (`wl_append`, migration 0011) and opened its wake
 * (`wl_open_wake`, 0034) in two round trips, two commits. Between them the relay could deliver the
 * event to the orchestrator, which found no open wake and opened it itself (0.3-0.5 of client wakes),
 * and the job waited one more round trip. `wl_append_open_wake` is `wl_append` and, once that has
 * appended and the caller asked for a wake (`p_wake` not null), `wl_open_wake` in the same statement,
 * as it is (the try-lock, and `held` for the caller's claim after its commit). The reason is the
 * caller's, from the state it folded, as the append's projection is.
 *
 * It answers one row: the append's, and the wake's rows as `wl_open_wake` returns them (a jsonb array
 * of `{opened, wake}`; empty when no wake was asked for or one was already open).
 *
 * Like the two it composes it runs as its caller, so row security applies and the app role may
 * execute it as any role may (only definer functions are revoked, 0009).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_append_open_wake(
        p_tenant text, p_session text, p_fence bigint, p_expected_seq integer, p_state jsonb,
        p_events jsonb, p_headers jsonb, p_now timestamptz, p_consume_upto integer,
        p_tool_batch jsonb, p_tool_calls jsonb, p_settled jsonb, p_finish jsonb,
        p_wake text, p_reason text, p_max_in_flight integer)
      RETURNS TABLE (outcome text, last_seq integer, lease_epoch bigint, state jsonb, wakes jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        answer record;
        wake_rows jsonb := '[]'::jsonb;
      BEGIN
        SELECT * INTO answer FROM wl_append(p_tenant, p_session, p_fence, p_expected_seq, p_state,
          p_events, p_headers, p_now, p_consume_upto, p_tool_batch, p_tool_calls, p_settled, p_finish);
        IF answer.outcome = 'appended' AND p_wake IS NOT NULL THEN
          SELECT coalesce(jsonb_agg(to_jsonb(o)), '[]'::jsonb) INTO wake_rows
            FROM wl_open_wake(p_tenant, p_session, p_wake, p_reason, p_now, p_max_in_flight) o;
        END IF;
        RETURN QUERY SELECT answer.outcome, answer.last_seq, answer.lease_epoch, answer.state, wake_rows;
      END
    $$`,
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "DROP FUNCTION wl_append_open_wake(text, text, bigint, integer, jsonb, jsonb, jsonb, timestamptz, integer, jsonb, jsonb, jsonb, jsonb, text, text, integer)",
  ]);
}
