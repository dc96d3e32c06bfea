import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE wakes (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      session_id text NOT NULL REFERENCES sessions (id),
      status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
      reason text NOT NULL,
      attempt integer NOT NULL DEFAULT 1 CHECK (attempt > 0),
      worker_id text,
      lease_epoch bigint,
      lease_expires_at timestamptz,
      due_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      CHECK (status <> 'running' OR (lease_epoch IS NOT NULL AND lease_expires_at IS NOT NULL))
    )`,
    // At most one open wake per session: the orchestrator may race itself and lose cleanly.
    `CREATE UNIQUE INDEX wakes_one_open_per_session ON wakes (session_id)
      WHERE status IN ('queued', 'running')`,
    "CREATE INDEX wakes_due_idx ON wakes (due_at) WHERE status = 'queued'",
    "CREATE INDEX wakes_lease_expiry_idx ON wakes (lease_expires_at) WHERE status = 'running'",
    "CREATE INDEX wakes_tenant_session_idx ON wakes (tenant_id, session_id, created_at)",
    `CREATE TABLE tool_calls (
      id text PRIMARY KEY REFERENCES session_events (id) DEFERRABLE INITIALLY DEFERRED,
      tenant_id text NOT NULL REFERENCES tenants (id),
      session_id text NOT NULL REFERENCES sessions (id),
      wake_id text NOT NULL REFERENCES wakes (id),
      name text NOT NULL,
      input jsonb NOT NULL,
      status text NOT NULL
        CHECK (status IN ('planned', 'running', 'succeeded', 'failed', 'unknown', 'cancelled')),
      idempotent boolean NOT NULL,
      result jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    "CREATE INDEX tool_calls_session_idx ON tool_calls (session_id, created_at)",
    "CREATE INDEX tool_calls_wake_idx ON tool_calls (wake_id)",
  ]);
}
