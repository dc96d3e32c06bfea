import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// Outcomes and evaluators (issue #11). An outcome is what a session works toward: a title and success
// criteria, from `outcome_define` (a row here) or from a person's `user.define_outcome` event (read
// from the event log, so it has no row). The latest one is the session's active outcome. Each graded
// attempt is one `outcome_evaluations` row numbered per outcome; the primary key makes a second
// attempt with the same number fail instead of overwriting, and the trend is read over these rows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE outcomes (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      session_id text NOT NULL,
      title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
      criteria jsonb NOT NULL CHECK (jsonb_typeof(criteria) = 'array'),
      evaluator_prompt text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id)
    )`,
    "CREATE INDEX outcomes_session_idx ON outcomes (tenant_id, session_id, created_at DESC)",
    `CREATE TABLE outcome_evaluations (
      tenant_id text NOT NULL REFERENCES tenants (id),
      outcome_id text NOT NULL,
      iteration integer NOT NULL CHECK (iteration >= 1),
      session_id text NOT NULL,
      wake_id text,
      evaluator text NOT NULL CHECK (evaluator IN ('model', 'rubric')),
      score double precision NOT NULL CHECK (score >= 0 AND score <= 1),
      passed boolean NOT NULL,
      feedback text NOT NULL,
      criteria_results jsonb NOT NULL CHECK (jsonb_typeof(criteria_results) = 'array'),
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (tenant_id, outcome_id, iteration),
      FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id)
    )`,
    "SELECT wl_isolate_tenant_table('outcomes')",
    "SELECT wl_isolate_tenant_table('outcome_evaluations')",
  ]);
}
