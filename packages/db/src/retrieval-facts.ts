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

export function readRankingFacts(
  db: Kysely<Database>,
  scope: MemoryScope,
  input: { sessionIds: readonly string[]; memoryVersionIds: readonly string[] },
): Promise<RankingFacts> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const versionSessions = new Map<string, string | null>();
    if (input.memoryVersionIds.length > 0) {
      const authors = await sql<{ id: string; author_session_id: string | null }>`
        SELECT id, author_session_id FROM memory_versions
        WHERE tenant_id = ${scope.tenantId} AND agent_id = ${scope.agentId}
          AND id = ANY (${[...input.memoryVersionIds]}::text[])`.execute(trx);
      for (const row of authors.rows) versionSessions.set(row.id, row.author_session_id);
    }
    const ids = new Set(input.sessionIds);
    for (const session of versionSessions.values()) if (session !== null) ids.add(session);
    if (ids.size === 0) return { sessions: [], versionSessions };
    const result = await sql<{
      id: string;
      parent_session_id: string | null;
      agent_spec: unknown;
      environment_spec: unknown | null;
      outcome_title: string | null;
      outcome_criteria: unknown;
    }>`
      SELECT s.id, s.parent_session_id, v.spec AS agent_spec, env.spec AS environment_spec,
        o.title AS outcome_title, o.criteria AS outcome_criteria
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
      WHERE s.tenant_id = ${scope.tenantId} AND s.agent_id = ${scope.agentId} AND s.id = ANY (${[...ids]}::text[])`.execute(
      trx,
    );
    return {
      versionSessions,
      sessions: result.rows.map((row) => ({
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
      })),
    };
  });
}
