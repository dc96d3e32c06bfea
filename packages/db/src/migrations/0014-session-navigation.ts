import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// Session navigation (issue #11) lists one agent's sessions newest first and asks of each whether it
// was given an outcome. Without these indexes a tenant's other agents' sessions are walked to fill a
// page, and the outcome check scans every event of every session.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "CREATE INDEX sessions_agent_recent_idx ON sessions (tenant_id, agent_id, id DESC)",
    "CREATE INDEX session_events_outcome_idx ON session_events (session_id) WHERE type = 'user.define_outcome'",
  ]);
}
