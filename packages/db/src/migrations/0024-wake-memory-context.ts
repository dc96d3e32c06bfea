import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// What a wake's system context needs of an agent's memory (issue #9): the entries of one store (the
// skills index) and whether it has any entry outside some stores (whether recall could find one), in
// one call that scopes itself to the tenant like wl_session (migration 0011) instead of a transaction
// of four round trips on the way to every wake's first model request. The scoping block is 0011's,
// copied on purpose: an applied migration's SQL must never change with another file.
const SCOPE = `
  IF coalesce(current_setting('wakeloop.tenant_id', true), '') NOT IN ('', p_tenant) THEN
    RAISE EXCEPTION 'one transaction cannot act for two tenants' USING ERRCODE = 'WL001';
  END IF;
  PERFORM set_config('wakeloop.tenant_id', p_tenant, true);`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_memory_context(p_tenant text, p_agent text, p_store text, p_limit integer,
        p_not_recalled text[])
      RETURNS TABLE (entries jsonb, recallable boolean)
      LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
      BEGIN
        ${SCOPE}
        RETURN QUERY SELECT
          coalesce((SELECT jsonb_agg(jsonb_build_object('target', l.target, 'metadata', l.metadata)
              ORDER BY l.target)
            FROM (SELECT e.target, e.metadata FROM memory_entries e
              WHERE e.tenant_id = p_tenant AND e.agent_id = p_agent AND e.store = p_store
              ORDER BY e.target LIMIT p_limit) l), '[]'::jsonb),
          EXISTS (SELECT 1 FROM memory_entries e
            WHERE e.tenant_id = p_tenant AND e.agent_id = p_agent AND e.store <> ALL (p_not_recalled));
      END
    $$`,
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, ["DROP FUNCTION wl_memory_context(text, text, text, integer, text[])"]);
}
