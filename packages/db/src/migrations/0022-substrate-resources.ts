import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

/*
 * The agent's versioned substrate (issue #10, "Versioned resources"): the files every session of an
 * agent sees read-only at /workspace/agent. `substrate_versions` is the append-only history (content,
 * hash, author); `substrate_files` points each path at its latest version and keeps its size, so the
 * per-agent limit is one sum. A version written by a tool call carries its id, and the unique index
 * makes a retried call find its version instead of writing a second one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE substrate_versions (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      agent_id text NOT NULL,
      path text NOT NULL CHECK (length(path) BETWEEN 1 AND 512),
      content text NOT NULL,
      content_hash text NOT NULL,
      size_bytes integer NOT NULL CHECK (size_bytes >= 0),
      restored_from_version_id text REFERENCES substrate_versions (id),
      author_kind text NOT NULL CHECK (author_kind IN ('tool', 'api', 'harness')),
      author_session_id text,
      author_wake_id text,
      author_tool_call_id text,
      author_api_key_id text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    "CREATE INDEX substrate_versions_file_idx ON substrate_versions (tenant_id, agent_id, path, id DESC)",
    `CREATE UNIQUE INDEX substrate_versions_tool_call_idx ON substrate_versions (tenant_id, author_tool_call_id)
      WHERE author_tool_call_id IS NOT NULL`,
    `CREATE TABLE substrate_files (
      tenant_id text NOT NULL,
      agent_id text NOT NULL,
      path text NOT NULL,
      current_version_id text NOT NULL REFERENCES substrate_versions (id),
      content_hash text NOT NULL,
      size_bytes integer NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (tenant_id, agent_id, path),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    "SELECT wl_isolate_tenant_table('substrate_versions')",
    "SELECT wl_isolate_tenant_table('substrate_files')",
  ]);
}
