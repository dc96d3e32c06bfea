import { type Kysely, sql } from "kysely";
import type { Database } from "./database";
import type { MemoryScope } from "./memory-store";
import { withTenant } from "./tenant-scope";

/*
 * What retrieval's ranking priors compare (openboa: setup affinity, same outcome, relation): for each
 * session a hit came from, its pinned agent setup, its parent and its active outcome; for memory hits,
 * the session that wrote the entry's current version. One agent of one tenant, read in one transaction.
 */

export interface SessionRankingFacts {
  sessionId: string;
  parentSessionId: string | null;
  /** The spec of the agent version the session is pinned to, and of its environment (stored JSON). */
  agentSpec: unknown;
  environmentSpec: unknown | null;
  /** The latest outcome defined for the session (by a tool or a person's event), if any. */
  outcome: { title: string; criteria: string[] } | null;
}

export interface RankingFacts {
  sessions: SessionRankingFacts[];
  /** Memory version id → the session that wrote it (null: written by a person or the harness outside one). */
  versionSessions: Map<string, string | null>;
}

/** Outcome titles are the first line of a `user.define_outcome` description, as `activeOutcome` reads them. */
const TITLE_MAX = 200;

/** One statement (one round trip in the tenant transaction): the versions' authors, then the sessions. */
export function readRankingFacts(
  db: Kysely<Database>,
  scope: MemoryScope,
  input: { sessionIds: readonly string[]; memoryVersionIds: readonly string[] },
): Promise<RankingFacts> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const result = await sql<{
      version_id: string | null;
      id: string | null;
      parent_session_id: string | null;
      agent_spec: unknown;
      environment_spec: unknown | null;
      outcome_title: string | null;
      outcome_criteria: unknown;
    }>`
      WITH authors AS (
        SELECT id, author_session_id FROM memory_versions
        WHERE tenant_id = ${scope.tenantId} AND agent_id = ${scope.agentId}
          AND id = ANY (${[...input.memoryVersionIds]}::text[])
      ), wanted AS (
        SELECT unnest(${[...input.sessionIds]}::text[]) AS id
        UNION SELECT author_session_id FROM authors WHERE author_session_id IS NOT NULL
      )
      SELECT id AS version_id, author_session_id AS id, NULL AS parent_session_id, NULL::jsonb AS agent_spec,
        NULL::jsonb AS environment_spec, NULL AS outcome_title, NULL::jsonb AS outcome_criteria
      FROM authors
      UNION ALL
      SELECT NULL, s.id, s.parent_session_id, v.spec, env.spec, o.title, o.criteria
      FROM sessions s
      JOIN agent_versions v ON v.tenant_id = s.tenant_id AND v.agent_id = s.agent_id AND v.version = s.agent_version
      LEFT JOIN environments env ON env.tenant_id = s.tenant_id AND env.id = s.environment_id
      LEFT JOIN LATERAL (
        SELECT x.title, x.criteria FROM (
          SELECT title, criteria, created_at, id FROM outcomes
            WHERE tenant_id = s.tenant_id AND session_id = s.id
          UNION ALL
          SELECT left(split_part(body->>'description', E'\\n', 1), ${TITLE_MAX}),
              coalesce(body->'criteria', '[]'::jsonb), created_at, id
            FROM session_events
            WHERE tenant_id = s.tenant_id AND session_id = s.id AND type = 'user.define_outcome'
        ) x ORDER BY x.created_at DESC, x.id DESC LIMIT 1
      ) o ON true
      WHERE s.tenant_id = ${scope.tenantId} AND s.agent_id = ${scope.agentId} AND s.id IN (SELECT id FROM wanted)`.execute(
      trx,
    );
    const versionSessions = new Map<string, string | null>();
    const sessions: SessionRankingFacts[] = [];
    for (const row of result.rows) {
      if (row.version_id !== null) {
        versionSessions.set(row.version_id, row.id);
      } else if (row.id !== null) {
        sessions.push({
          sessionId: row.id,
          parentSessionId: row.parent_session_id,
          agentSpec: row.agent_spec,
          environmentSpec: row.environment_spec,
          outcome:
            row.outcome_title === null
              ? null
              : {
                  title: row.outcome_title,
                  criteria: Array.isArray(row.outcome_criteria)
                    ? row.outcome_criteria.filter((item): item is string => typeof item === "string")
                    : [],
                },
        });
      }
    }
    return { versionSessions, sessions };
  });
}
