import { AgentSpec, EnvironmentSpec, type SessionEvent, WakeloopError } from "@wakeloop/contracts";
import { type AcquiredLease, type Database, readEvents, readJson } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { SessionView } from "./session-view";

/** Events per read of a session's history, the wake's start (`startWake`) included. */
export const HISTORY_PAGE = 1_000;

export interface SessionSpecs {
  agent: AgentSpec;
  environment: { id: string; spec: EnvironmentSpec } | null;
}

/**
 * The pinned agent version and the environment the lease returned, read through their schemas. A
 * session with its own model (`sessions.model`, same provider) runs it in place of the agent's, for
 * every request of the wake: the model call, its span and `llm_generate`'s default.
 */
export function sessionSpecs(lease: AcquiredLease): SessionSpecs {
  const { session } = lease;
  const agent = agentSpec(lease);
  return {
    agent: session.model === null ? agent : { ...agent, model: { ...agent.model, id: session.model } },
    environment:
      session.environment_id === null
        ? null
        : {
            id: session.environment_id,
            spec: readJson(EnvironmentSpec, lease.environmentSpec, `environment ${session.environment_id}`),
          },
  };
}

// An agent version never changes once saved (a trigger refuses updates), so each version's spec is
// read through its schema once per worker rather than at every wake's start. Shared: never mutated.
const AGENT_SPECS = 1_024;
const agentSpecs = new LRUCache<string, AgentSpec>({ max: AGENT_SPECS });

function agentSpec({ session, agentSpec: stored }: AcquiredLease): AgentSpec {
  const key = `${session.agent_id}:${session.agent_version}`;
  let spec = agentSpecs.get(key);
  if (spec === undefined) {
    spec = readJson(AgentSpec, stored, `agent ${session.agent_id} v${session.agent_version}`);
    agentSpecs.set(key, spec);
  }
  return spec;
}

/**
 * The view a wake starts from: the session row its lease returned, its specs, and the history up to
 * that row's last seq, read after the `known` prefix (a `HistoryCache`'s). Events committed after it
 * are picked up by the wake's next write.
 */
export async function loadSession(
  db: Kysely<Database>,
  lease: AcquiredLease,
  specs: SessionSpecs,
  known: SessionEvent[] = [],
): Promise<SessionView> {
  const { session } = lease;
  const events = await readHistory(db, session.tenant_id, session.id, session.state.last_seq, known);
  return new SessionView({
    tenantId: session.tenant_id,
    sessionId: session.id,
    agentId: session.agent_id,
    ...specs,
    parentSessionId: session.parent_session_id,
    depth: session.depth,
    state: session.state,
    events,
  });
}

/**
 * What a wake holds of its history once started: the cached prefix and the page `startWake` read
 * after the `knownSeq` events it asked from, when that prefix is still the cache's (a cache found
 * stale is given up, and the page with it).
 */
export function startingHistory(
  cached: SessionEvent[],
  knownSeq: number,
  page: readonly SessionEvent[],
): SessionEvent[] {
  return cached.length === knownSeq ? [...cached, ...page] : cached;
}

/** The history up to `lastSeq`, reading only what follows the `known` prefix. */
async function readHistory(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  lastSeq: number,
  known: SessionEvent[],
) {
  const events = known;
  while (events.length < lastSeq) {
    const page = await readEvents(db, {
      tenantId,
      sessionId,
      afterSeq: events.length,
      limit: Math.min(HISTORY_PAGE, lastSeq - events.length),
    });
    if (page.length === 0) {
      throw new WakeloopError(
        "session_history_mismatch",
        `session ${sessionId} is missing events after seq ${events.length}`,
      );
    }
    events.push(...page);
  }
  return events;
}
