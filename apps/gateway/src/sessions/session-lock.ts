import { type SessionState, WakeloopError } from "@wakeloop/contracts";
import { type Database, readSessionState, scopeTransaction } from "@wakeloop/db";
import type { Transaction } from "kysely";
import { notFound } from "../http/api-error";

/** A session row locked for the rest of its transaction. */
export interface LockedSession {
  state: SessionState;
  agentId: string;
}

/**
 * Locks the tenant's session row for the rest of the transaction and returns its projection, so a
 * check made on it still holds when the events it allowed are appended.
 */
export async function lockSession(
  trx: Transaction<Database>,
  tenantId: string,
  sessionId: string,
): Promise<LockedSession> {
  await scopeTransaction(trx, tenantId);
  const row = await trx
    .selectFrom("sessions")
    .select(["state", "agent_id"])
    .where("tenant_id", "=", tenantId)
    .where("id", "=", sessionId)
    .forUpdate()
    .executeTakeFirst();
  if (row === undefined) throw notFound("session", sessionId);
  return { state: readSessionState(row.state), agentId: row.agent_id };
}

export function sessionTerminated(state: SessionState): WakeloopError {
  return new WakeloopError(
    "session_terminated",
    `the session is terminated (${state.termination_reason}); it takes no more events`,
    { details: { termination_reason: state.termination_reason } },
  );
}
