import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";
const TENANT = "current_setting('wakeloop.tenant_id', true)";
/** The filters both searches share; $1 agent, $3 stores (null: all), $4 stores left out, $5 enabled only. */
const SCOPE = `e.tenant_id = ${TENANT} AND e.agent_id = $1
  AND ($3 IS NULL OR e.store = ANY ($3)) AND NOT (e.store = ANY (coalesce($4, '{}')))
  AND (NOT $5 OR coalesce(e.metadata->>'enabled', 'true') = 'true')`;

/*
 * Memory stores of the memory-retrieval service (issue #10): per agent, named stores of entries, each
 * write an immutable version. `memory_entries` is the current state (one row per live entry, the
 * searchable copy); `memory_versions` is the append-only history; `memory_tool_calls` records each
 * executed write by tool call id, in the transaction of the write, so a retry never writes twice.
 *
 * Search goes through two definer functions scoped to the transaction's tenant: under row-level
 * security, Postgres may not evaluate a non-leakproof operator (`@@`, `ILIKE`, `<%`) before the policy,
 * so it cannot use the search indexes and scans every row. The functions apply the tenant themselves,
 * and run the query through EXECUTE with the search text as a literal, so each is planned for it (the
 * trigram index serves a pattern only when the plan knows it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    // Search indexes lead with the agent (btree_gin), so one index scan finds an agent's matches however
    // many entries other agents hold, and the planner never prefers scanning the agent's rows instead.
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    `CREATE TABLE memory_versions (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      agent_id text NOT NULL,
      store text NOT NULL,
      target text NOT NULL,
      content text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      content_hash text NOT NULL,
      size_bytes integer NOT NULL,
      deleted boolean NOT NULL DEFAULT false,
      author_kind text NOT NULL CHECK (author_kind IN ('tool', 'api', 'harness')),
      author_session_id text,
      author_wake_id text,
      author_tool_call_id text,
      author_api_key_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    "CREATE INDEX memory_versions_entry_idx ON memory_versions (tenant_id, agent_id, store, target, id DESC)",
    `CREATE TABLE memory_entries (
      tenant_id text NOT NULL,
      agent_id text NOT NULL,
      store text NOT NULL,
      target text NOT NULL,
      content text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      size_bytes integer NOT NULL,
      current_version_id text NOT NULL REFERENCES memory_versions (id),
      updated_at timestamptz NOT NULL DEFAULT now(),
      search_tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', target || ' ' || coalesce(metadata->>'description', '')), 'A')
        || setweight(to_tsvector('english', content), 'B')
      ) STORED,
      PRIMARY KEY (tenant_id, agent_id, store, target),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    // fastupdate off: a pending list (up to 4 MB of unindexed entries scanned by every search) would
    // make search slow after bursts of writes; each write pays its index update instead.
    `CREATE INDEX memory_entries_tsv_idx ON memory_entries
      USING gin (tenant_id, agent_id, search_tsv) WITH (fastupdate = off)`,
    `CREATE INDEX memory_entries_trgm_idx ON memory_entries
      USING gin (tenant_id, agent_id, (target || ' ' || content) gin_trgm_ops) WITH (fastupdate = off)`,
    `CREATE TABLE memory_tool_calls (
      tenant_id text NOT NULL REFERENCES tenants (id),
      tool_call_id text NOT NULL,
      tool text NOT NULL,
      result jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, tool_call_id)
    )`,
    `CREATE FUNCTION wl_memory_search_text(agent text, query text, stores text[], excluded text[],
        enabled_only boolean, max_rows integer)
      RETURNS TABLE (store text, target text, current_version_id text, metadata jsonb, rank float8, snippet text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      BEGIN
        RETURN QUERY EXECUTE format($q$
          SELECT top.store, top.target, top.current_version_id, top.metadata, top.rank,
            ts_headline('english', top.content, top.q, 'MaxFragments=1, MaxWords=30, MinWords=8')
          FROM (
            SELECT e.store, e.target, e.current_version_id, e.metadata, e.content, q,
              ts_rank_cd(e.search_tsv, q)::float8 AS rank, e.updated_at
            FROM memory_entries e, websearch_to_tsquery('english', %L) q
            WHERE ${SCOPE} AND e.search_tsv @@ q
            ORDER BY rank DESC, e.updated_at DESC LIMIT $6
          ) top ORDER BY top.rank DESC, top.updated_at DESC$q$, query)
        USING agent, query, stores, excluded, enabled_only, max_rows;
      END
      $fn$`,
    `CREATE FUNCTION wl_memory_search_trigram(agent text, query text, stores text[], excluded text[],
        enabled_only boolean, max_rows integer)
      RETURNS TABLE (store text, target text, current_version_id text, metadata jsonb, rank float8, snippet text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      BEGIN
        RETURN QUERY EXECUTE format($q$
          SELECT e.store, e.target, e.current_version_id, e.metadata,
            word_similarity($2, e.target || ' ' || e.content)::float8 AS rank,
            substr(e.content, greatest(1, strpos(lower(e.content), lower($2)) - 60), 200) AS snippet
          FROM memory_entries e
          WHERE ${SCOPE} AND ((e.target || ' ' || e.content) ILIKE %L OR %L <%% (e.target || ' ' || e.content))
          ORDER BY rank DESC, e.updated_at DESC LIMIT $6$q$,
          '%' || replace(replace(replace(query, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%', query)
        USING agent, query, stores, excluded, enabled_only, max_rows;
      END
      $fn$`,
    "REVOKE EXECUTE ON FUNCTION wl_memory_search_text(text, text, text[], text[], boolean, integer) FROM PUBLIC",
    "REVOKE EXECUTE ON FUNCTION wl_memory_search_trigram(text, text, text[], text[], boolean, integer) FROM PUBLIC",
    "SELECT wl_isolate_tenant_table('memory_versions')",
    "SELECT wl_isolate_tenant_table('memory_entries')",
    "SELECT wl_isolate_tenant_table('memory_tool_calls')",
  ]);
}
