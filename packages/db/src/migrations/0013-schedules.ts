import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

const DEFINER = "SECURITY DEFINER SET search_path = public, pg_temp";

// Reminders and scheduled tasks (issue #11, "Time"): the orchestrator owns time, so due times live here
// and every replica polls them. One table for both kinds, since both are "fire at next_run_at":
// - a reminder is a one-shot message into the session that set it (`session_id`, `at`);
// - a task is an agent's cron (`cron` + `timezone`) or one-shot (`at`) job; each firing starts a fresh
//   session with `prompt` and a token limit (`session_id` is the session that created it, if any).
// `next_run_at` null means finished (a one-shot that fired, or a cron with nothing left). A firing is
// one transaction that locks the row (FOR UPDATE SKIP LOCKED), records the occurrence in
// `schedule_firings` (its primary key is the occurrence key: a second firing of the same occurrence
// cannot commit), does its effect and moves `next_run_at` on. Firings keep no foreign key to their
// schedule, so cancelling a task keeps its history.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE schedules (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('reminder', 'task')),
      session_id text,
      name text,
      prompt text NOT NULL,
      at timestamptz,
      cron text,
      timezone text,
      max_total_tokens integer CHECK (max_total_tokens > 0),
      enabled boolean NOT NULL DEFAULT true,
      next_run_at timestamptz,
      last_run_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id),
      FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id),
      CHECK ((at IS NULL) <> (cron IS NULL)),
      CHECK ((cron IS NULL) = (timezone IS NULL)),
      CHECK (kind = 'task' OR (session_id IS NOT NULL AND at IS NOT NULL)),
      CHECK (kind = 'reminder' OR name IS NOT NULL)
    )`,
    "CREATE INDEX schedules_due_idx ON schedules (next_run_at) WHERE enabled AND next_run_at IS NOT NULL",
    "CREATE INDEX schedules_agent_idx ON schedules (tenant_id, agent_id, kind, created_at)",
    `CREATE TABLE schedule_firings (
      tenant_id text NOT NULL REFERENCES tenants (id),
      schedule_id text NOT NULL,
      occurrence_at timestamptz NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('fired', 'skipped', 'session_ended', 'agent_archived')),
      session_id text,
      fired_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, schedule_id, occurrence_at),
      FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, id)
    )`,
    "SELECT wl_isolate_tenant_table('schedules')",
    "SELECT wl_isolate_tenant_table('schedule_firings')",
    // The firing loop crosses tenants: it learns which tenants have something due, then fires each
    // tenant's schedules in a transaction scoped to it.
    `CREATE FUNCTION wl_tenants_with_due_schedules(due_by timestamptz, max_rows integer)
      RETURNS TABLE (tenant_id text) LANGUAGE sql STABLE ${DEFINER} AS $$
      SELECT DISTINCT s.tenant_id FROM schedules s
      WHERE s.enabled AND s.next_run_at IS NOT NULL AND s.next_run_at <= $1 LIMIT $2
    $$`,
    "REVOKE EXECUTE ON FUNCTION wl_tenants_with_due_schedules(timestamptz, integer) FROM PUBLIC",
  ]);
}
