import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";
const TENANT = "current_setting('wakeloop.tenant_id', true)";
/** The filters both event searches share; $1 agent, $3 sessions (null: all), $4 session left out. */
const SCOPE = `e.tenant_id = ${TENANT} AND e.agent_id = $1
  AND ($3 IS NULL OR e.session_id = ANY ($3)) AND ($4 IS NULL OR e.session_id <> $4)`;
const EVENT_COLUMNS =
  "event_id text, session_id text, seq integer, type text, tool_name text, created_at timestamptz";

/*
 * Retrieval over session history (issue #10): `session_event_index` holds the searchable text of each
 * committed message, tool call and tool result, one row per event id, written by the memory-retrieval
 * service's consumer of the committed-events stream (so a redelivery inserts nothing). Search goes
 * through definer functions scoped to the transaction's tenant for the reason migration 0012 gives:
 * under row-level security the search indexes could not serve `@@`, `ILIKE` or `<%`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE session_event_index (
      event_id text PRIMARY KEY,
      tenant_id text NOT NULL,
      agent_id text NOT NULL,
      session_id text NOT NULL REFERENCES sessions (id),
      seq integer NOT NULL,
      type text NOT NULL,
      tool_name text,
      content text NOT NULL,
      created_at timestamptz NOT NULL,
      indexed_at timestamptz NOT NULL DEFAULT now(),
      search_tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(tool_name, '')), 'A') || setweight(to_tsvector('english', content), 'B')
      ) STORED,
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    `CREATE INDEX session_event_index_tsv_idx ON session_event_index
      USING gin (tenant_id, agent_id, search_tsv) WITH (fastupdate = off)`,
    `CREATE INDEX session_event_index_trgm_idx ON session_event_index
      USING gin (tenant_id, agent_id, content gin_trgm_ops) WITH (fastupdate = off)`,
    `CREATE FUNCTION wl_event_search_text(agent text, query text, sessions text[], excluded text, max_rows integer)
      RETURNS TABLE (${EVENT_COLUMNS}, rank float8, snippet text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      BEGIN
        RETURN QUERY EXECUTE format($q$
          SELECT top.event_id, top.session_id, top.seq, top.type, top.tool_name, top.created_at, top.rank,
            ts_headline('english', top.content, top.q, 'MaxFragments=1, MaxWords=30, MinWords=8')
          FROM (
            SELECT e.event_id, e.session_id, e.seq, e.type, e.tool_name, e.created_at, e.content, q,
              ts_rank_cd(e.search_tsv, q)::float8 AS rank
            FROM session_event_index e, websearch_to_tsquery('english', %L) q
            WHERE ${SCOPE} AND e.search_tsv @@ q
            ORDER BY rank DESC, e.created_at DESC LIMIT $5
          ) top ORDER BY top.rank DESC, top.created_at DESC$q$, query)
        USING agent, query, sessions, excluded, max_rows;
      END
      $fn$`,
    `CREATE FUNCTION wl_event_search_trigram(agent text, query text, sessions text[], excluded text, max_rows integer)
      RETURNS TABLE (${EVENT_COLUMNS}, rank float8, snippet text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      BEGIN
        RETURN QUERY EXECUTE format($q$
          SELECT e.event_id, e.session_id, e.seq, e.type, e.tool_name, e.created_at,
            word_similarity($2, e.content)::float8 AS rank,
            substr(e.content, greatest(1, strpos(lower(e.content), lower($2)) - 60), 200) AS snippet
          FROM session_event_index e
          WHERE ${SCOPE} AND (e.content ILIKE %L OR %L <%% e.content)
          ORDER BY rank DESC, e.created_at DESC LIMIT $5$q$,
          '%' || replace(replace(replace(query, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%', query)
        USING agent, query, sessions, excluded, max_rows;
      END
      $fn$`,
    // Spans carry no agent: they are the agent's through their session. Names and attributes are matched
    // as text (a trace search is rare and bounded to the agent's sessions).
    `CREATE FUNCTION wl_span_search(agent text, query text, sessions text[], max_rows integer)
      RETURNS TABLE (trace_id text, span_id text, session_id text, wake_id text, name text, status_code text,
        start_time timestamptz, duration_ms float8, matched text)
      LANGUAGE sql STABLE ${DEFINER} AS $fn$
        SELECT sp.trace_id, sp.span_id, sp.session_id, sp.wake_id, sp.name, sp.status_code, sp.start_time,
          extract(epoch FROM sp.end_time - sp.start_time)::float8 * 1000,
          CASE WHEN strpos(lower(sp.name), lower($2)) > 0 THEN 'name' ELSE 'attributes' END
        FROM sessions s JOIN spans sp ON sp.session_id = s.id
        WHERE s.tenant_id = ${TENANT} AND s.agent_id = $1 AND ($3 IS NULL OR s.id = ANY ($3))
          AND (strpos(lower(sp.name), lower($2)) > 0 OR strpos(lower(sp.attributes::text), lower($2)) > 0)
        ORDER BY sp.start_time DESC LIMIT $4
      $fn$`,
    "REVOKE EXECUTE ON FUNCTION wl_event_search_text(text, text, text[], text, integer) FROM PUBLIC",
    "REVOKE EXECUTE ON FUNCTION wl_event_search_trigram(text, text, text[], text, integer) FROM PUBLIC",
    "REVOKE EXECUTE ON FUNCTION wl_span_search(text, text, text[], integer) FROM PUBLIC",
    "SELECT wl_isolate_tenant_table('session_event_index')",
  ]);
}
