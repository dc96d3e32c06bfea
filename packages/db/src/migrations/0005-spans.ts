import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    // No foreign keys: spans arrive asynchronously from every service and may precede or outlive rows.
    `CREATE TABLE spans (
      trace_id text NOT NULL,
      span_id text NOT NULL,
      parent_span_id text,
      tenant_id text,
      session_id text,
      wake_id text,
      name text NOT NULL,
      kind text NOT NULL,
      service_name text NOT NULL,
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      status_code text NOT NULL CHECK (status_code IN ('unset', 'ok', 'error')),
      status_message text,
      attributes jsonb NOT NULL DEFAULT '{}',
      events jsonb NOT NULL DEFAULT '[]',
      PRIMARY KEY (trace_id, span_id)
    )`,
    "CREATE INDEX spans_session_idx ON spans (session_id, start_time) WHERE session_id IS NOT NULL",
    "CREATE INDEX spans_wake_idx ON spans (wake_id, start_time) WHERE wake_id IS NOT NULL",
  ]);
}
