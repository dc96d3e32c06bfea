import { AgentSpec, EnvironmentSpec, type SessionEvent, WakeloopError } from "@wakeloop/contracts";
import { type Database, readEvents, readJson, type SessionRow, withTenant } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { SessionView } from "./session-view";

const PAGE = 1_000;

/** Reads what a wake needs besides its session row: the pinned agent version, environment and history. */
export async function loadSession(db: Kysely<Database>, session: SessionRow): Promise<SessionView> {
  const { tenant_id: tenantId, id: sessionId } = session;
  // Events committed after the session row was read are picked up by the wake's next write.
  const state = session.state;
  const environmentId = session.environment_id;
  const [version, environment, events] = await Promise.all([
    withTenant(db, tenantId, (trx) =>
      trx
        .selectFrom("agent_versions")
        .select("spec")
        .where("tenant_id", "=", tenantId)
        .where("agent_id", "=", session.agent_id)
        .where("version", "=", session.agent_version)
        .executeTakeFirstOrThrow(),
    ),
    environmentId
      ? withTenant(db, tenantId, (trx) =>
          trx
            .selectFrom("environments")
            .select(["id", "spec"])
            .where("tenant_id", "=", tenantId)
            .where("id", "=", environmentId)
            .executeTakeFirstOrThrow(),
        )
      : null,
    readHistory(db, tenantId, sessionId, state.last_seq),
  ]);
  return new SessionView({
    tenantId,
    sessionId,
    agentId: session.agent_id,
    agent: readJson(AgentSpec, version.spec, `agent ${session.agent_id} v${session.agent_version}`),
    environment: environment
      ? {
          id: environment.id,
          spec: readJson(EnvironmentSpec, environment.spec, `environment ${environment.id}`),
        }
      : null,
    parentSessionId: session.parent_session_id,
    state,
    events,
  });
}

async function readHistory(db: Kysely<Database>, tenantId: string, sessionId: string, lastSeq: number) {
  const events: SessionEvent[] = [];
  while (events.length < lastSeq) {
    const page = await readEvents(db, {
      tenantId,
      sessionId,
      afterSeq: events.length,
      limit: Math.min(PAGE, lastSeq - events.length),
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
