import type { Kysely } from "kysely";
import { runStatements } from "./run-statements";

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE agents (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      name text NOT NULL,
      latest_version integer NOT NULL CHECK (latest_version > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      archived_at timestamptz
    )`,
    "CREATE INDEX agents_tenant_idx ON agents (tenant_id, id)",
    `CREATE TABLE agent_versions (
      agent_id text NOT NULL REFERENCES agents (id),
      version integer NOT NULL CHECK (version > 0),
      tenant_id text NOT NULL REFERENCES tenants (id),
      spec jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (agent_id, version)
    )`,
    // Sessions pin the version they started with, so a version must never change under them.
    `CREATE FUNCTION wl_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
    END
    $$`,
    `CREATE TRIGGER agent_versions_immutable BEFORE UPDATE ON agent_versions
      FOR EACH ROW EXECUTE FUNCTION wl_refuse_update()`,
    `CREATE TABLE environments (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      name text NOT NULL,
      spec jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      archived_at timestamptz
    )`,
    "CREATE INDEX environments_tenant_idx ON environments (tenant_id, id)",
  ]);
}
