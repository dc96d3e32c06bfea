import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

// Agent-defined tools, libraries and UI components (issue #13). One head row per live name of a kind
// (`agent_code`) and one immutable row per save (`agent_code_versions`): an update or enable/disable
// moves the head, never rewrites a version. A delete marks the head deleted and frees the name; its
// versions stay as history, and a new item of that name starts again at version 1 under a new head id.
export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE agent_code (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      agent_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('tool', 'library', 'ui_component')),
      name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,47}$'),
      version integer NOT NULL CHECK (version >= 1),
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      deleted_at timestamptz,
      UNIQUE (tenant_id, id),
      FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
    )`,
    `CREATE UNIQUE INDEX agent_code_live_name_idx ON agent_code (tenant_id, agent_id, kind, name)
      WHERE deleted_at IS NULL`,
    `CREATE TABLE agent_code_versions (
      tenant_id text NOT NULL REFERENCES tenants (id),
      code_id text NOT NULL,
      version integer NOT NULL CHECK (version >= 1),
      description text NOT NULL,
      code text NOT NULL,
      schema jsonb,
      requires jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(requires) = 'array'),
      session_id text,
      tool_call_id text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (tenant_id, code_id, version),
      FOREIGN KEY (tenant_id, code_id) REFERENCES agent_code (tenant_id, id)
    )`,
    "SELECT wl_isolate_tenant_table('agent_code')",
    "SELECT wl_isolate_tenant_table('agent_code_versions')",
  ]);
}
