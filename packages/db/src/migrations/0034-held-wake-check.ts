import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/*
 * Cheaper wake dispatch (issue #9): fewer waits on the per-tenant dispatch lock, one round trip for
 * the orchestrator's "does this session still need a wake?".
 *
 * `wl_claim_wakes` (migration 0011) took the tenant's advisory lock on every call, and every wake that
 * ends calls it: the lock serialised those calls with the openers' (`wl_open_wake`), about 5 ms of
 * waiting per wake under load. It now returns at once when the tenant holds no wake, looked up in a
 * partial index of held wakes, which is empty whenever no tenant is at its limit.
 *
 * Why that check, made without the lock, strands no wake: a wake W is held only when its opener, under
 * the lock, counted its tenant at the limit. A finisher that does not see W (not yet committed) may
 * have ended a wake the opener still counted, leaving room no one uses. So the opener claims again
 * once its commit is visible (`scheduleWake`'s callers do, through `claimWakesToPublish`): that claim
 * starts after the finisher's end committed (the finisher looked before W committed, which is before
 * the opener's second claim), so it counts the room; and a finisher that looks after W committed sees
 * W and claims under the lock as before. A crash between the commit and the second claim leaves W to
 * the periodic pass (`wl_tenants_with_held_wakes`), as before.
 *
 * `wl_open_wake` claims only if it gets the lock at once (`pg_try_advisory_xact_lock`); else it
 * returns its wake as held, for the same second claim after its commit. Waiting for the lock kept the
 * new wake uncommitted meanwhile: the orchestrator, reached by the event through the relay, found no
 * open wake, opened one itself and waited on the gateway's uncommitted row, for nothing (0.7-0.8 of
 * the orchestrator's checks did, 200 sessions at once). Now the wake commits at once, and its opener
 * waits for the lock in the second claim, which finds nothing to do when another claim under the
 * lock has already published it (one claim publishes every held wake it has room for).
 *
 * `wl_session_awaiting_wake` is `wl_session` (0011) for a session with no open wake, nothing when one
 * is open: the orchestrator asks it when an event reaches it and opens a wake (`wl_open_wake`) only
 * when the session needs one and has none, where it read the session and then called `wl_open_wake`
 * for every event, including those whose wake the gateway had opened in the event's own commit.
 *
 * The scoping block is 0011's, copied on purpose: an applied migration's SQL must never change with
 * another file.
 */
const SCOPE = `
  IF coalesce(current_setting('wakeloop.tenant_id', true), '') NOT IN ('', p_tenant) THEN
    RAISE EXCEPTION 'one transaction cannot act for two tenants' USING ERRCODE = 'WL001';
  END IF;
  PERFORM set_config('wakeloop.tenant_id', p_tenant, true);`;

const CLAIM_UNDER_LOCK = `
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
          SELECT * FROM claimed c ORDER BY c.due_at, c.created_at, c.id;`;

function claimWakes(heldCheck: string): string {
  return `CREATE OR REPLACE FUNCTION wl_claim_wakes(p_tenant text, p_max_in_flight integer) RETURNS SETOF wakes
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      DECLARE
        room integer;
      BEGIN
        ${SCOPE}${heldCheck}${CLAIM_UNDER_LOCK}
      END
    $$`;
}

function openWake(claim: string): string {
  return `CREATE OR REPLACE FUNCTION wl_open_wake(p_tenant text, p_session text, p_wake text, p_reason text,
        p_due_at timestamptz, p_max_in_flight integer)
      RETURNS TABLE (opened boolean, wake jsonb)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        INSERT INTO wakes (id, tenant_id, session_id, status, reason, attempt, due_at)
          VALUES (p_wake, p_tenant, p_session, 'queued', p_reason, 1, p_due_at)
          ON CONFLICT (session_id) WHERE status IN ('queued', 'running') DO NOTHING;
        IF NOT FOUND THEN RETURN; END IF;${claim}
      END
    $$`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "CREATE INDEX wakes_tenant_held_idx ON wakes (tenant_id) WHERE status = 'queued' AND published_at IS NULL",
    claimWakes(`
        IF NOT EXISTS (SELECT 1 FROM wakes h
            WHERE h.tenant_id = p_tenant AND h.status = 'queued' AND h.published_at IS NULL) THEN
          RETURN;
        END IF;`),
    // The lock, taken here, is taken again by wl_claim_wakes: the same session holds it twice.
    openWake(`
        RETURN QUERY SELECT true, NULL::jsonb;
        IF pg_try_advisory_xact_lock(hashtextextended('wl.wake_dispatch.' || p_tenant, 0)) THEN
          RETURN QUERY SELECT false, to_jsonb(c) FROM wl_claim_wakes(p_tenant, p_max_in_flight) c;
        END IF;`),
    `CREATE FUNCTION wl_session_awaiting_wake(p_tenant text, p_session text) RETURNS SETOF sessions
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        RETURN QUERY SELECT * FROM sessions s WHERE s.tenant_id = p_tenant AND s.id = p_session
          AND NOT EXISTS (SELECT 1 FROM wakes w
            WHERE w.session_id = p_session AND w.status IN ('queued', 'running'));
      END
    $$`,
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "DROP FUNCTION wl_session_awaiting_wake(text, text)",
    openWake(`
        RETURN QUERY SELECT true, NULL::jsonb
          UNION ALL SELECT false, to_jsonb(c) FROM wl_claim_wakes(p_tenant, p_max_in_flight) c;`),
    claimWakes(""),
    "DROP INDEX wakes_tenant_held_idx",
  ]);
}
