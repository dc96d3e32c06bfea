import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/**
 * Tables whose own key to `tenants` another key already implies: a composite key to a parent through
 * `(tenant_id, …)` whose other columns are NOT NULL, and the parent's tenant is checked in turn (a
 * session's by its agent version's, down to `agents.tenant_id`). Every insert looked the tenant up
 * once more for nothing. Deleting a tenant is still refused while it owns rows, by its agents' key.
 */
const IMPLIED_TENANT_KEYS = [
  "sessions",
  "session_events",
  "wakes",
  "tool_batches",
  "tool_calls",
  "agent_state",
] as const;

/*
 * Less Postgres CPU per durable step (issue #9): a step writes its state, five events and a span.
 *
 * Tenant keys. The tables above each lose their `<table>_tenant_id_fkey`; the composite keys of
 * migration 0009 (`(tenant_id, session_id)` to sessions, `(tenant_id, agent_id)` to agents, …) still
 * refuse a row of an unknown tenant or of another tenant's parent (tenant-keys.test.ts).
 *
 * Span search text. Migration 0025 generated `spans.search_text` from the whole attributes and events
 * JSON, ~350 characters a span, mostly keys and random ids: trigrams the GIN index stores and updates
 * at every insert and that no search wants. It is now written by a BEFORE INSERT trigger from what a
 * search names (a tool, a model, `error`, an exception message): the name, the status and its message,
 * the attribute values except ids (keys ending in `.id` or `_id`), the events' names and exception
 * messages; ~50 characters. A span is found by its ids through `wl_tenant_trace_spans` (the
 * `session_get_trace` tool, migration 0009), not through search. Spans are never updated (the exporter
 * skips a span already written), so no update trigger. Existing rows keep their longer text (no
 * rewrite of the table and its index): it holds every word the new text would, JSON-escaped.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    ...IMPLIED_TENANT_KEYS.map((table) => `ALTER TABLE ${table} DROP CONSTRAINT ${table}_tenant_id_fkey`),
    "ALTER TABLE spans ALTER COLUMN search_text DROP EXPRESSION",
    `CREATE FUNCTION wl_span_search_text() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.search_text := left(lower(concat_ws(' ', NEW.name, NEW.status_code, NEW.status_message,
          (SELECT string_agg(a.value, ' ') FROM jsonb_each_text(NEW.attributes) a WHERE a.key !~ '[._]id$'),
          (SELECT string_agg(concat_ws(' ', e->>'name', e->'attributes'->>'exception.message'), ' ')
            FROM jsonb_array_elements(NEW.events) e))), 4000);
        RETURN NEW;
      END
      $fn$`,
    `CREATE TRIGGER spans_search_text BEFORE INSERT ON spans
      FOR EACH ROW EXECUTE FUNCTION wl_span_search_text()`,
    "REVOKE EXECUTE ON FUNCTION wl_span_search_text() FROM PUBLIC",
  ]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    "DROP TRIGGER spans_search_text ON spans",
    "DROP FUNCTION wl_span_search_text()",
    // A column cannot become generated again: it is added anew (rewriting the table) with its index.
    "ALTER TABLE spans DROP COLUMN search_text",
    `ALTER TABLE spans ADD COLUMN search_text text GENERATED ALWAYS AS (left(lower(name || ' ' || status_code
      || ' ' || coalesce(status_message, '') || ' ' || attributes::text || ' ' || events::text), 4000)) STORED`,
    "CREATE INDEX spans_search_trgm_idx ON spans USING gin (search_text gin_trgm_ops)",
    ...IMPLIED_TENANT_KEYS.map(
      (table) => `ALTER TABLE ${table} ADD CONSTRAINT ${table}_tenant_id_fkey
        FOREIGN KEY (tenant_id) REFERENCES tenants (id)`,
    ),
  ]);
}
