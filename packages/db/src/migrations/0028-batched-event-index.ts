import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

/*
 * The event indexer writes a batch of committed events in one statement (issue #9): memory-retrieval's
 * consumer serves every tenant, so, like the outbox relay (migration 0009), it writes through a narrow
 * definer function instead of one tenant-scoped transaction per event. Each row names its tenant, and
 * only sessions of that tenant take it: the join on (session, tenant) is the row security the function
 * steps around, so an event naming another tenant's session is left out as it was under 0017's policy.
 * A result's tool name comes from its call in the same tenant. Returns how many rows were added (an
 * event already indexed, a redelivery, adds none).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_index_session_events(p_rows jsonb) RETURNS bigint
      LANGUAGE plpgsql VOLATILE ${DEFINER} AS $fn$
      DECLARE added bigint;
      BEGIN
        INSERT INTO session_event_index
          (event_id, tenant_id, agent_id, session_id, seq, type, tool_name, content, created_at)
        SELECT r.event_id, s.tenant_id, s.agent_id, r.session_id, r.seq, r.type,
          coalesce(r.tool_name, (SELECT u.body->>'name' FROM session_events u
            WHERE u.id = r.tool_use_id AND u.tenant_id = r.tenant_id)),
          r.content, r.created_at
        FROM jsonb_to_recordset(p_rows) AS r(event_id text, tenant_id text, session_id text, seq integer,
          type text, tool_name text, tool_use_id text, content text, created_at timestamptz)
        JOIN sessions s ON s.id = r.session_id AND s.tenant_id = r.tenant_id
        ON CONFLICT (event_id) DO NOTHING;
        GET DIAGNOSTICS added = ROW_COUNT;
        RETURN added;
      END
      $fn$`,
    "REVOKE EXECUTE ON FUNCTION wl_index_session_events(jsonb) FROM PUBLIC",
  ]);
}
