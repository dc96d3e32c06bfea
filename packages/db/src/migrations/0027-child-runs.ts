import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// `session_run_child` (issue #11): while a parent's run of a sub-session is open, the sub-session's row
// holds it: the parent's call waiting for it, how many model requests the run allows and the
// sub-session's last seq when it began (requests after it count). The orchestrator sets it when the
// parent pauses on the call and clears it when it answers the call; the harness reads it at each step
// to stop the sub-session at the bound. A column, not part of the projection: it is the orchestrator's
// bookkeeping of another session's call, and a run starts once (set under row locks), like
// `child_outcome`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, ["ALTER TABLE sessions ADD COLUMN child_run jsonb"]);
}
