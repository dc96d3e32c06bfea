import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE sessions (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL,
      agent_version integer NOT NULL,
      environment_id text REFERENCES environments (id),
      parent_session_id text REFERENCES sessions (id),
      status text NOT NULL CHECK (status IN ('idle', 'running', 'rescheduling', 'terminated')),
      state jsonb NOT NULL,
      last_seq integer NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
      lease_epoch bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (agent_id, agent_version) REFERENCES agent_versions (agent_id, version)
    )`,
    "CREATE INDEX sessions_tenant_idx ON sessions (tenant_id, id)",
    "CREATE INDEX sessions_tenant_status_idx ON sessions (tenant_id, status)",
    "CREATE INDEX sessions_tenant_agent_idx ON sessions (tenant_id, agent_id)",
    "CREATE INDEX sessions_tenant_parent_idx ON sessions (tenant_id, parent_session_id)",
    `CREATE TABLE session_events (
      session_id text NOT NULL REFERENCES sessions (id),
      seq integer NOT NULL CHECK (seq > 0),
      id text NOT NULL UNIQUE,
      tenant_id text NOT NULL REFERENCES tenants (id),
      type text NOT NULL,
      body jsonb NOT NULL,
      processed_at timestamptz,
      created_at timestamptz NOT NULL,
      wake_id text,
      trace_id text,
      PRIMARY KEY (session_id, seq)
    )`,
    // Finds the queued user messages that a model request consumes (stamped processed_at).
    `CREATE INDEX session_events_unprocessed_idx ON session_events (session_id, seq)
      WHERE type = 'user.message' AND processed_at IS NULL`,
    `CREATE TABLE outbox (
      id bigserial PRIMARY KEY,
      topic text NOT NULL,
      msg_id text NOT NULL,
      body jsonb NOT NULL,
      headers jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    // A hint for the relay, delivered at commit; the relay still polls, so a lost notify only delays.
    `CREATE FUNCTION wl_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('wl_outbox', '');
      RETURN NULL;
    END
    $$`,
    `CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
      FOR EACH STATEMENT EXECUTE FUNCTION wl_outbox_notify()`,
  ]);
}
