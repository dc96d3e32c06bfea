import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";
/** Models some replica keeps registered; the triggers queue work for these only. */
const LIVE = "retrieval_embedding_models x WHERE x.expires_at > now()";
/** What a memory entry's vector embeds: target, a skill's one-line description, content. */
const MEMORY_TEXT = `m.target || ': ' || coalesce(nullif(m.metadata->>'description', '') || E'\\n', '')
  || m.content`;

/*
 * Embeddings keyed by model (issue #10). Migration 0025 kept one model in a singleton row that every
 * replica overwrote at start-up: a replica without embeddings turned the queue off for the others, and
 * two replicas with different models stored each other's vectors under one key. Now:
 * - `retrieval_embedding_models` holds every model some replica embeds with, each registered until
 *   `expires_at`; a replica with embeddings registers its model at start-up and renews it while it runs
 *   (`wl_embedding_configure`). A replica without embeddings registers nothing and turns nothing off;
 *   a model no replica renewed is dropped with its queue by the next call, so turning embeddings off is
 *   stopping the replicas that have them.
 * - The queue and the vectors are keyed by model too: each model's embedders claim only its rows, and
 *   each replica's searches read only its own model's vectors (a vector's model names the space its
 *   numbers live in: model and dimensions).
 * - A memory entry's text carries its `description` metadata (a skill's one-line description, which
 *   `skills_search`'s full text also ranks on, weighted A) between target and content. Skills' vectors
 *   made before are dropped and the skills queued again.
 * - A memory entry's vector exists only while the version it embedded is current: a rewrite deletes it
 *   (and queues the entry), and a vector of a version rewritten since its claim is not stored (a store
 *   racing the rewrite's commit may still land; the entry's new vector replaces it moments later). A
 *   hybrid search so reads the newest memory vectors without joining every one to its entry.
 * Migration 0026's separate skill trigger goes: one memory trigger queues every store but notepads.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE retrieval_embedding_models (
      model text PRIMARY KEY,
      registered_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`,
    `INSERT INTO retrieval_embedding_models (model, expires_at)
      SELECT model, now() + interval '10 minutes' FROM retrieval_embedding_settings`,
    "ALTER TABLE embedding_backlog ADD COLUMN model text",
    "UPDATE embedding_backlog SET model = (SELECT model FROM retrieval_embedding_settings)",
    "DELETE FROM embedding_backlog WHERE model IS NULL",
    `ALTER TABLE embedding_backlog ALTER COLUMN model SET NOT NULL, DROP CONSTRAINT embedding_backlog_pkey,
      ADD PRIMARY KEY (tenant_id, kind, ref, target, model)`,
    "DROP INDEX embedding_backlog_due_idx",
    "CREATE INDEX embedding_backlog_due_idx ON embedding_backlog (model, not_before)",
    `ALTER TABLE retrieval_embeddings DROP CONSTRAINT retrieval_embeddings_pkey,
      ADD PRIMARY KEY (tenant_id, kind, ref, target, model)`,

    `CREATE OR REPLACE FUNCTION wl_embedding_enqueue_events() RETURNS trigger LANGUAGE plpgsql ${DEFINER} AS $fn$
      BEGIN
        INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, model)
          SELECT a.tenant_id, a.agent_id, 'event', a.event_id, x.model FROM added a, ${LIVE}
          ON CONFLICT DO NOTHING;
        RETURN NULL;
      END
      $fn$`,
    "DROP TRIGGER memory_entries_embed_skills ON memory_entries",
    "DROP FUNCTION wl_embedding_enqueue_skill()",
    `CREATE OR REPLACE FUNCTION wl_embedding_enqueue_memory() RETURNS trigger LANGUAGE plpgsql ${DEFINER} AS $fn$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          DELETE FROM retrieval_embeddings WHERE tenant_id = OLD.tenant_id AND kind = 'memory'
            AND ref = OLD.store AND target = OLD.target AND agent_id = OLD.agent_id;
          RETURN NULL;
        END IF;
        -- A vector exists only for the current version: a search needs no join to tell.
        IF TG_OP = 'UPDATE' THEN
          DELETE FROM retrieval_embeddings WHERE tenant_id = OLD.tenant_id AND kind = 'memory'
            AND ref = OLD.store AND target = OLD.target AND agent_id = OLD.agent_id;
        END IF;
        IF NEW.store <> 'notepad' THEN
          INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target, model)
            SELECT NEW.tenant_id, NEW.agent_id, 'memory', NEW.store, NEW.target, x.model FROM ${LIVE}
            ON CONFLICT (tenant_id, kind, ref, target, model) DO UPDATE SET attempts = 0, not_before = now();
        END IF;
        RETURN NULL;
      END
      $fn$`,

    "DROP FUNCTION wl_embedding_configure(text)",
    "DROP FUNCTION wl_embedding_configure_0025(text)",
    "DROP TABLE retrieval_embedding_settings",
    // Start-up and renewal of a replica: first every model no replica renewed in time goes, with its
    // queue (its vectors stay, for when it comes back). Then `new_model` (null: a replica without
    // embeddings, which only sweeps) is renewed for `ttl_ms`; when it was not registered (new, or lapsed
    // and swept), everything without a vector of it is queued. Returns how many rows were queued.
    `CREATE FUNCTION wl_embedding_configure(new_model text, ttl_ms integer) RETURNS bigint
      LANGUAGE plpgsql VOLATILE ${DEFINER} AS $fn$
      DECLARE
        queued bigint := 0;
        entries bigint := 0;
      BEGIN
        WITH gone AS (DELETE FROM retrieval_embedding_models WHERE expires_at <= now() RETURNING model)
        DELETE FROM embedding_backlog b USING gone WHERE b.model = gone.model;
        IF new_model IS NULL THEN RETURN 0; END IF;
        UPDATE retrieval_embedding_models SET expires_at = now() + make_interval(secs => ttl_ms / 1000.0)
          WHERE model = new_model;
        IF FOUND THEN RETURN 0; END IF;
        INSERT INTO retrieval_embedding_models (model, expires_at)
          VALUES (new_model, now() + make_interval(secs => ttl_ms / 1000.0))
          ON CONFLICT (model) DO UPDATE SET expires_at = excluded.expires_at;
        INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, model)
          SELECT e.tenant_id, e.agent_id, 'event', e.event_id, new_model FROM session_event_index e
          WHERE NOT EXISTS (SELECT 1 FROM retrieval_embeddings r WHERE r.tenant_id = e.tenant_id
            AND r.kind = 'event' AND r.ref = e.event_id AND r.target = '' AND r.model = new_model)
          ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS queued = ROW_COUNT;
        INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target, model)
          SELECT m.tenant_id, m.agent_id, 'memory', m.store, m.target, new_model FROM memory_entries m
          WHERE m.store <> 'notepad' AND NOT EXISTS (SELECT 1 FROM retrieval_embeddings r
            WHERE r.tenant_id = m.tenant_id AND r.kind = 'memory' AND r.ref = m.store AND r.target = m.target
              AND r.model = new_model AND r.version_id = m.current_version_id)
          ON CONFLICT DO NOTHING;
        GET DIAGNOSTICS entries = ROW_COUNT;
        RETURN queued + entries;
      END
      $fn$`,
    // As 0025's, for one model's rows, and a memory text with its description.
    "DROP FUNCTION wl_embedding_claim(integer, integer, integer)",
    `CREATE FUNCTION wl_embedding_claim(model_name text, max_rows integer, retry_ms integer, max_attempts integer)
      RETURNS TABLE (tenant_id text, agent_id text, kind text, ref text, target text, attempts smallint,
        session_id text, version_id text, text text)
      LANGUAGE sql VOLATILE ${DEFINER} AS $fn$
        WITH due AS (
          SELECT b.tenant_id, b.kind, b.ref, b.target FROM embedding_backlog b
          WHERE b.model = $1 AND b.not_before <= now() AND b.attempts < $4
          ORDER BY b.not_before LIMIT $2 FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE embedding_backlog b SET attempts = b.attempts + 1,
            not_before = now() + make_interval(secs => $3 / 1000.0 * power(2, b.attempts))
          FROM due WHERE b.model = $1 AND b.tenant_id = due.tenant_id AND b.kind = due.kind
            AND b.ref = due.ref AND b.target = due.target
          RETURNING b.*
        )
        SELECT c.tenant_id, c.agent_id, c.kind, c.ref, c.target, c.attempts,
          e.session_id, m.current_version_id,
          CASE c.kind WHEN 'event' THEN coalesce(e.tool_name || ': ', '') || e.content ELSE ${MEMORY_TEXT} END
        FROM claimed c
        LEFT JOIN session_event_index e ON c.kind = 'event' AND e.event_id = c.ref
        LEFT JOIN memory_entries m ON c.kind = 'memory' AND m.tenant_id = c.tenant_id
          AND m.agent_id = c.agent_id AND m.store = c.ref AND m.target = c.target
      $fn$`,
    // As 0025's, keyed by model; a memory vector is stored only while the version it embedded is current
    // (a rewrite since the claim deleted the old one and queued the entry again).
    `CREATE OR REPLACE FUNCTION wl_embedding_store(model_name text, rows jsonb) RETURNS void
      LANGUAGE sql VOLATILE ${DEFINER} AS $fn$
        WITH r AS (
          SELECT * FROM jsonb_to_recordset($2) AS r (tenant_id text, agent_id text, kind text, ref text,
            target text, attempts smallint, session_id text, version_id text, vector text)
        ), stored AS (
          INSERT INTO retrieval_embeddings AS x
            (tenant_id, agent_id, kind, ref, target, session_id, version_id, model, vector)
          SELECT r.tenant_id, r.agent_id, r.kind, r.ref, r.target, r.session_id, r.version_id, $1,
            decode(r.vector, 'base64')
          FROM r WHERE r.vector IS NOT NULL AND (r.kind = 'event' OR EXISTS (SELECT 1 FROM memory_entries m
            WHERE m.tenant_id = r.tenant_id AND m.agent_id = r.agent_id AND m.store = r.ref
              AND m.target = r.target AND m.current_version_id = r.version_id))
          ON CONFLICT (tenant_id, kind, ref, target, model) DO UPDATE SET version_id = excluded.version_id,
            vector = excluded.vector, embedded_at = now()
        )
        DELETE FROM embedding_backlog b USING r WHERE b.model = $1 AND b.tenant_id = r.tenant_id
          AND b.kind = r.kind AND b.ref = r.ref AND b.target = r.target AND b.attempts = r.attempts
      $fn$`,
    // Vectors of versions no longer current (kept until now, skipped when read) go.
    `DELETE FROM retrieval_embeddings r WHERE r.kind = 'memory' AND NOT EXISTS (SELECT 1 FROM memory_entries m
      WHERE m.tenant_id = r.tenant_id AND m.agent_id = r.agent_id AND m.store = r.ref AND m.target = r.target
        AND m.current_version_id = r.version_id)`,
    // Skills' vectors so far left their description out: made again, for the models now registered
    // (a model registered later queues every skill without a vector of it).
    "DELETE FROM retrieval_embeddings WHERE kind = 'memory' AND ref = 'skills'",
    `INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target, model)
      SELECT m.tenant_id, m.agent_id, 'memory', m.store, m.target, x.model FROM memory_entries m, ${LIVE}
        AND m.store = 'skills'
      ON CONFLICT DO NOTHING`,
    ...["wl_embedding_configure(text, integer)", "wl_embedding_claim(text, integer, integer, integer)"].map(
      (fn) => `REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`,
    ),
  ]);
}
