import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";
const TENANT = "current_setting('wakeloop.tenant_id', true)";
/** Event search scope, as in migration 0017: $1 agent, $3 sessions (null: all), $4 session left out. */
const EVENT_SCOPE = `e.tenant_id = ${TENANT} AND e.agent_id = $1
  AND ($3 IS NULL OR e.session_id = ANY ($3)) AND ($4 IS NULL OR e.session_id <> $4)`;
/**
 * Matches of one event search ranked at most, newest first. A query of common words (`deploy or
 * staging`) matches a tenth of a big agent's history; ranking every match read nearly the whole table
 * (the p99 of the benchmark). With this bound the planner reads the newest matches through
 * `session_event_index_recent_idx` and stops; a rare query still takes the text index and ranks all.
 */
const EVENT_RANK_WINDOW = 500;
/** The same bound for memory entries, newest written first (migration 0012's scope, $1 agent … $5). */
const MEMORY_SCOPE = `e.tenant_id = ${TENANT} AND e.agent_id = $1
  AND ($3 IS NULL OR e.store = ANY ($3)) AND NOT (e.store = ANY (coalesce($4, '{}')))
  AND (NOT $5 OR coalesce(e.metadata->>'enabled', 'true') = 'true')`;
const MEMORY_RANK_WINDOW = 500;
/** Memory stores whose entries are not memory to retrieve (migration 0012's `memory_search` default). */
const NOT_RETRIEVED = "ARRAY['skills', 'notepad']";

/*
 * Retrieval ranking (issue #10): optional embeddings of indexed events and memory entries, a bound on
 * how many matches one full-text search ranks, and an indexed search text of spans.
 *
 * Embeddings. pgvector is not packaged for Debian bookworm, so vectors are float4 values stored as
 * little-endian bytes (`bytea`: node-postgres hands them over as a Buffer, read as a Float32Array with
 * no text parsing) and ranked in the memory-retrieval service over a bounded candidate set. Nothing is
 * queued while no replica has embeddings configured: `retrieval_embedding_settings` (one row, written
 * by `wl_embedding_configure` at start-up) says which model is on, and the triggers enqueue only then.
 * `embedding_backlog` is the work queue (claimed with a retry-after time, so a crashed or failing
 * embedder's rows come back with exponential backoff), `retrieval_embeddings` the vectors. A memory
 * entry's vector names the version it embedded; ranking uses it only while that version is current.
 * Keys: kind `event` (ref = event id, target = '') or `memory` (ref = store, target = target).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE retrieval_embedding_settings (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      model text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE embedding_backlog (
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('event', 'memory')),
      ref text NOT NULL,
      target text NOT NULL DEFAULT '',
      attempts smallint NOT NULL DEFAULT 0,
      not_before timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, kind, ref, target)
    )`,
    "CREATE INDEX embedding_backlog_due_idx ON embedding_backlog (not_before)",
    `CREATE TABLE retrieval_embeddings (
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('event', 'memory')),
      ref text NOT NULL,
      target text NOT NULL DEFAULT '',
      session_id text,
      version_id text,
      model text NOT NULL,
      vector bytea NOT NULL,
      embedded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, kind, ref, target)
    )`,
    // The recent window a hybrid search ranks: an agent's newest vectors of one kind and model.
    `CREATE INDEX retrieval_embeddings_recent_idx ON retrieval_embeddings
      (tenant_id, agent_id, kind, model, embedded_at DESC)`,
    "SELECT wl_isolate_tenant_table('embedding_backlog')",
    "SELECT wl_isolate_tenant_table('retrieval_embeddings')",
    // Statement-level: one settings check per indexer batch, however many events it inserts.
    `CREATE FUNCTION wl_embedding_enqueue_events() RETURNS trigger LANGUAGE plpgsql ${DEFINER} AS $fn$
      BEGIN
        IF EXISTS (SELECT 1 FROM retrieval_embedding_settings) THEN
          INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref)
            SELECT a.tenant_id, a.agent_id, 'event', a.event_id FROM added a
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
      END
      $fn$`,
    `CREATE TRIGGER session_event_index_embed AFTER INSERT ON session_event_index
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION wl_embedding_enqueue_events()`,
    // A new content is embedded again from its first attempt; a deleted entry's vector goes with it.
    `CREATE FUNCTION wl_embedding_enqueue_memory() RETURNS trigger LANGUAGE plpgsql ${DEFINER} AS $fn$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          DELETE FROM retrieval_embeddings WHERE tenant_id = OLD.tenant_id AND kind = 'memory'
            AND ref = OLD.store AND target = OLD.target AND agent_id = OLD.agent_id;
          RETURN NULL;
        END IF;
        IF EXISTS (SELECT 1 FROM retrieval_embedding_settings)
          AND NOT NEW.store = ANY (${NOT_RETRIEVED}) THEN
          INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target)
            VALUES (NEW.tenant_id, NEW.agent_id, 'memory', NEW.store, NEW.target)
            ON CONFLICT (tenant_id, kind, ref, target) DO UPDATE SET attempts = 0, not_before = now();
        END IF;
        RETURN NULL;
      END
      $fn$`,
    `CREATE TRIGGER memory_entries_embed AFTER INSERT OR UPDATE OF content OR DELETE ON memory_entries
      FOR EACH ROW EXECUTE FUNCTION wl_embedding_enqueue_memory()`,
    // Start-up of a replica: null turns embeddings off (and drops the queue); a model turns them on and,
    // when it is new, queues every indexed event and memory entry that has no vector of it.
    `CREATE FUNCTION wl_embedding_configure(new_model text) RETURNS bigint
      LANGUAGE plpgsql VOLATILE ${DEFINER} AS $fn$
      DECLARE queued bigint := 0;
      BEGIN
        IF new_model IS NULL THEN
          DELETE FROM retrieval_embedding_settings;
          DELETE FROM embedding_backlog;
          RETURN 0;
        END IF;
        IF EXISTS (SELECT 1 FROM retrieval_embedding_settings WHERE model = new_model) THEN RETURN 0; END IF;
        INSERT INTO retrieval_embedding_settings (model) VALUES (new_model)
          ON CONFLICT (singleton) DO UPDATE SET model = new_model, updated_at = now();
        INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref)
          SELECT e.tenant_id, e.agent_id, 'event', e.event_id FROM session_event_index e
          WHERE NOT EXISTS (SELECT 1 FROM retrieval_embeddings r WHERE r.tenant_id = e.tenant_id
            AND r.kind = 'event' AND r.ref = e.event_id AND r.target = '' AND r.model = new_model)
          ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS queued = ROW_COUNT;
        INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target)
          SELECT m.tenant_id, m.agent_id, 'memory', m.store, m.target FROM memory_entries m
          WHERE NOT m.store = ANY (${NOT_RETRIEVED}) AND NOT EXISTS (SELECT 1 FROM retrieval_embeddings r
            WHERE r.tenant_id = m.tenant_id AND r.kind = 'memory' AND r.ref = m.store AND r.target = m.target
              AND r.model = new_model AND r.version_id = m.current_version_id)
          ON CONFLICT DO NOTHING;
        RETURN queued;
      END
      $fn$`,
    // Every tenant's due rows, oldest first, each given its next retry time (retry_ms doubling per
    // attempt) before it is embedded: a replica that dies or fails leaves them to come back then.
    // Rows whose source is gone come back with a null text, for the store call to drop.
    `CREATE FUNCTION wl_embedding_claim(max_rows integer, retry_ms integer, max_attempts integer)
      RETURNS TABLE (tenant_id text, agent_id text, kind text, ref text, target text, attempts smallint,
        session_id text, version_id text, text text)
      LANGUAGE sql VOLATILE ${DEFINER} AS $fn$
        WITH due AS (
          SELECT b.tenant_id, b.kind, b.ref, b.target FROM embedding_backlog b
          WHERE b.not_before <= now() AND b.attempts < $3
          ORDER BY b.not_before LIMIT $1 FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE embedding_backlog b SET attempts = b.attempts + 1,
            not_before = now() + make_interval(secs => $2 / 1000.0 * power(2, b.attempts))
          FROM due WHERE b.tenant_id = due.tenant_id AND b.kind = due.kind AND b.ref = due.ref
            AND b.target = due.target
          RETURNING b.*
        )
        SELECT c.tenant_id, c.agent_id, c.kind, c.ref, c.target, c.attempts,
          e.session_id, m.current_version_id,
          CASE c.kind WHEN 'event' THEN coalesce(e.tool_name || ': ', '') || e.content
            ELSE m.target || ': ' || m.content END
        FROM claimed c
        LEFT JOIN session_event_index e ON c.kind = 'event' AND e.event_id = c.ref
        LEFT JOIN memory_entries m ON c.kind = 'memory' AND m.tenant_id = c.tenant_id
          AND m.agent_id = c.agent_id AND m.store = c.ref AND m.target = c.target
      $fn$`,
    // Stores claimed rows' vectors (a null vector: the source is gone) and takes them off the queue,
    // unless they were queued again since the claim (a newer memory content resets attempts to 0).
    `CREATE FUNCTION wl_embedding_store(model_name text, rows jsonb) RETURNS void
      LANGUAGE sql VOLATILE ${DEFINER} AS $fn$
        WITH r AS (
          SELECT * FROM jsonb_to_recordset($2) AS r (tenant_id text, agent_id text, kind text, ref text,
            target text, attempts smallint, session_id text, version_id text, vector text)
        ), stored AS (
          INSERT INTO retrieval_embeddings AS x
            (tenant_id, agent_id, kind, ref, target, session_id, version_id, model, vector)
          SELECT r.tenant_id, r.agent_id, r.kind, r.ref, r.target, r.session_id, r.version_id, $1,
            decode(r.vector, 'base64')
          FROM r WHERE r.vector IS NOT NULL
          ON CONFLICT (tenant_id, kind, ref, target) DO UPDATE SET version_id = excluded.version_id,
            model = excluded.model, vector = excluded.vector, embedded_at = now()
        )
        DELETE FROM embedding_backlog b USING r WHERE b.tenant_id = r.tenant_id AND b.kind = r.kind
          AND b.ref = r.ref AND b.target = r.target AND b.attempts = r.attempts
      $fn$`,
    // Rows still to embed, and rows given up on after max_attempts (for the operator's metrics).
    `CREATE FUNCTION wl_embedding_backlog_size(max_attempts integer) RETURNS TABLE (pending bigint, failed bigint)
      LANGUAGE sql STABLE ${DEFINER} AS $fn$
        SELECT count(*) FILTER (WHERE attempts < $1), count(*) FILTER (WHERE attempts >= $1)
        FROM embedding_backlog
      $fn$`,
    ...[
      "wl_embedding_enqueue_events()",
      "wl_embedding_enqueue_memory()",
      "wl_embedding_configure(text)",
      "wl_embedding_claim(integer, integer, integer)",
      "wl_embedding_store(text, jsonb)",
      "wl_embedding_backlog_size(integer)",
    ].map((fn) => `REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`),

    `CREATE INDEX session_event_index_recent_idx ON session_event_index (tenant_id, agent_id, created_at DESC)`,
    `CREATE OR REPLACE FUNCTION wl_event_search_text(agent text, query text, sessions text[], excluded text,
        max_rows integer)
      RETURNS TABLE (event_id text, session_id text, seq integer, type text, tool_name text,
        created_at timestamptz, rank float8, snippet text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      BEGIN
        RETURN QUERY EXECUTE format($q$
          SELECT top.event_id, top.session_id, top.seq, top.type, top.tool_name, top.created_at, top.rank,
            ts_headline('english', top.content, top.q, 'MaxFragments=1, MaxWords=30, MinWords=8')
          FROM (
            SELECT recent.*, ts_rank_cd(recent.search_tsv, recent.q)::float8 AS rank FROM (
              SELECT e.event_id, e.session_id, e.seq, e.type, e.tool_name, e.created_at, e.content,
                e.search_tsv, q
              FROM session_event_index e, websearch_to_tsquery('english', %L) q
              WHERE ${EVENT_SCOPE} AND e.search_tsv @@ q
              ORDER BY e.created_at DESC LIMIT ${EVENT_RANK_WINDOW}
            ) recent
            ORDER BY rank DESC, recent.created_at DESC LIMIT $5
          ) top ORDER BY top.rank DESC, top.created_at DESC$q$, query)
        USING agent, query, sessions, excluded, max_rows;
      END
      $fn$`,
    "CREATE INDEX memory_entries_recent_idx ON memory_entries (tenant_id, agent_id, updated_at DESC)",
    `CREATE OR REPLACE FUNCTION wl_memory_search_text(agent text, query text, stores text[], excluded text[],
        enabled_only boolean, max_rows integer)
      RETURNS TABLE (store text, target text, current_version_id text, metadata jsonb, rank float8, snippet text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      BEGIN
        RETURN QUERY EXECUTE format($q$
          SELECT top.store, top.target, top.current_version_id, top.metadata, top.rank,
            ts_headline('english', top.content, top.q, 'MaxFragments=1, MaxWords=30, MinWords=8')
          FROM (
            SELECT recent.*, ts_rank_cd(recent.search_tsv, recent.q)::float8 AS rank FROM (
              SELECT e.store, e.target, e.current_version_id, e.metadata, e.content, e.search_tsv, q,
                e.updated_at
              FROM memory_entries e, websearch_to_tsquery('english', %L) q
              WHERE ${MEMORY_SCOPE} AND e.search_tsv @@ q
              ORDER BY e.updated_at DESC LIMIT ${MEMORY_RANK_WINDOW}
            ) recent
            ORDER BY rank DESC, recent.updated_at DESC LIMIT $6
          ) top ORDER BY top.rank DESC, top.updated_at DESC$q$, query)
        USING agent, query, stores, excluded, enabled_only, max_rows;
      END
      $fn$`,
    // Spans: one lower-cased search text (name, status, message, attributes, events such as exceptions)
    // computed once at insert, with a trigram index, instead of casting every span's attributes per search.
    `ALTER TABLE spans ADD COLUMN search_text text GENERATED ALWAYS AS (left(lower(name || ' ' || status_code
      || ' ' || coalesce(status_message, '') || ' ' || attributes::text || ' ' || events::text), 4000)) STORED`,
    "CREATE INDEX spans_search_trgm_idx ON spans USING gin (search_text gin_trgm_ops)",
    // Every word of the query must appear (a tool name, `error`, an exception message); the query is
    // planned with its words as literals so the trigram index can serve them.
    `CREATE OR REPLACE FUNCTION wl_span_search(agent text, query text, sessions text[], max_rows integer)
      RETURNS TABLE (trace_id text, span_id text, session_id text, wake_id text, name text, status_code text,
        start_time timestamptz, duration_ms float8, matched text)
      LANGUAGE plpgsql STABLE ${DEFINER} AS $fn$
      DECLARE
        words text[] := ARRAY(SELECT DISTINCT w FROM regexp_split_to_table(lower(query), '\\s+') w WHERE w <> '');
        filter text := '';
        in_name text := 'true';
        word text;
      BEGIN
        IF cardinality(words) = 0 THEN RETURN; END IF;
        FOREACH word IN ARRAY words LOOP
          filter := filter || format(' AND sp.search_text LIKE %L',
            '%' || replace(replace(replace(word, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%');
          in_name := in_name || format(' AND strpos(lower(sp.name), %L) > 0', word);
        END LOOP;
        RETURN QUERY EXECUTE format($q$
          SELECT sp.trace_id, sp.span_id, sp.session_id, sp.wake_id, sp.name, sp.status_code, sp.start_time,
            extract(epoch FROM sp.end_time - sp.start_time)::float8 * 1000,
            CASE WHEN %s THEN 'name' ELSE 'attributes' END
          FROM sessions s JOIN spans sp ON sp.session_id = s.id
          WHERE s.tenant_id = ${TENANT} AND s.agent_id = $1 AND ($2 IS NULL OR s.id = ANY ($2)) %s
          ORDER BY sp.start_time DESC LIMIT $3$q$, in_name, filter)
        USING agent, sessions, max_rows;
      END
      $fn$`,
  ]);
}
