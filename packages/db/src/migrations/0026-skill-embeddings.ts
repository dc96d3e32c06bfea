import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";
/** Skills with no vector of their current version and `model`, for the embedding queue. */
const UNEMBEDDED_SKILLS = (model: string) => `SELECT m.tenant_id, m.agent_id, 'memory', m.store, m.target
  FROM memory_entries m WHERE m.store = 'skills' AND NOT EXISTS (SELECT 1 FROM retrieval_embeddings r
    WHERE r.tenant_id = m.tenant_id AND r.kind = 'memory' AND r.ref = m.store AND r.target = m.target
      AND r.model = ${model} AND r.version_id = m.current_version_id)`;

/*
 * Skills are embedded like memory entries (issue #10): `skills_search` ranks by the same hybrid search
 * as `memory_search`. Migration 0025 left the `skills` store out of its enqueue trigger and start-up
 * function; rather than redefine them, a second trigger queues skill contents, and the start-up function
 * becomes 0025's followed by queueing skills that have no vector of the model (notepads stay out).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE FUNCTION wl_embedding_enqueue_skill() RETURNS trigger LANGUAGE plpgsql ${DEFINER} AS $fn$
      BEGIN
        INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target)
          SELECT NEW.tenant_id, NEW.agent_id, 'memory', NEW.store, NEW.target
          WHERE EXISTS (SELECT 1 FROM retrieval_embedding_settings)
          ON CONFLICT (tenant_id, kind, ref, target) DO UPDATE SET attempts = 0, not_before = now();
        RETURN NULL;
      END
      $fn$`,
    // 0025's trigger already deletes the vector of a deleted entry, skills included.
    `CREATE TRIGGER memory_entries_embed_skills AFTER INSERT OR UPDATE OF content ON memory_entries
      FOR EACH ROW WHEN (NEW.store = 'skills') EXECUTE FUNCTION wl_embedding_enqueue_skill()`,
    "ALTER FUNCTION wl_embedding_configure(text) RENAME TO wl_embedding_configure_0025",
    `CREATE FUNCTION wl_embedding_configure(new_model text) RETURNS bigint
      LANGUAGE plpgsql VOLATILE ${DEFINER} AS $fn$
      DECLARE queued bigint := wl_embedding_configure_0025(new_model);
      BEGIN
        IF new_model IS NOT NULL THEN
          INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target)
            ${UNEMBEDDED_SKILLS("new_model")}
          ON CONFLICT DO NOTHING;
        END IF;
        RETURN queued;
      END
      $fn$`,
    // Skills written while embeddings were already on (none queued while they are off).
    `INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, target)
      ${UNEMBEDDED_SKILLS("(SELECT model FROM retrieval_embedding_settings)")}
        AND EXISTS (SELECT 1 FROM retrieval_embedding_settings)
      ON CONFLICT DO NOTHING`,
    ...[
      "wl_embedding_enqueue_skill()",
      "wl_embedding_configure_0025(text)",
      "wl_embedding_configure(text)",
    ].map((fn) => `REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`),
  ]);
}
