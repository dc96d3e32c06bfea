import type { Session } from "@wakeloop/contracts";
import type { SessionRow } from "@wakeloop/db";

/** The API view of a session: identity from the row, everything that changes from the projection. */
export function toSession(row: SessionRow): Session {
  const { state } = row;
  return {
    id: row.id,
    agent: { id: row.agent_id, version: row.agent_version },
    environment_id: row.environment_id,
    parent_session_id: row.parent_session_id,
    model: row.model,
    status: state.status,
    stop_reason: state.stop_reason,
    termination_reason: state.termination_reason,
    title: state.title,
    metadata: state.metadata,
    usage: state.usage,
    cost_micro_usd: state.cost_micro_usd,
    budget: state.budget,
    delegated_tokens: state.delegated_tokens,
    defined_outcome: state.defined_outcome,
    last_seq: state.last_seq,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
