import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "./create-db";
import { copyDatabase, dropDatabase, ensureDatabase } from "./database-admin";
import { MIGRATIONS } from "./migrations";
import { migrateToLatest } from "./migrator";

const server = new URL(process.env.WL_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
server.pathname = `/wl_test_migrate_${randomBytes(6).toString("hex")}`;
const url = server.toString();
server.pathname = `${server.pathname}_copy`;
const copyUrl = server.toString();

afterAll(async () => {
  await dropDatabase(copyUrl);
  await dropDatabase(url);
});

/** The privileges PUBLIC holds on a database (its catalog ACL, or the defaults when it has none). */
async function publicPrivileges(db: ReturnType<typeof createDb>): Promise<string[]> {
  const result = await sql<{ privilege_type: string }>`
    SELECT a.privilege_type FROM pg_database d, aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) a
    WHERE d.datname = current_database() AND a.grantee = 0 ORDER BY 1`.execute(db);
  return result.rows.map((row) => row.privilege_type);
}

describe("migrations", () => {
  it("create the database once, apply on an empty database, and are idempotent", async () => {
    expect(await ensureDatabase(url)).toBe(true);
    expect(await ensureDatabase(url)).toBe(false);

    const db = createDb({ url, max: 4 });
    try {
      // Two services starting together: kysely's migration lock lets exactly one apply them.
      const [first, second] = await Promise.all([migrateToLatest(db), migrateToLatest(db)]);
      expect([...first, ...second]).toEqual(Object.keys(MIGRATIONS));
      expect(await migrateToLatest(db)).toEqual([]);

      const tables = await sql<{ table_name: string }>`
        SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%' ORDER BY table_name`.execute(db);
      expect(tables.rows.map((row) => row.table_name)).toEqual([
        "agent_code",
        "agent_code_versions",
        "agent_state",
        "agent_versions",
        "agents",
        "api_keys",
        "embedding_backlog",
        "environments",
        "idempotency_keys",
        "memory_entries",
        "memory_tool_calls",
        "memory_versions",
        "outbox",
        "outcome_evaluations",
        "outcomes",
        "provider_credentials",
        "retrieval_embedding_models",
        "retrieval_embeddings",
        "schedule_firings",
        "schedules",
        "session_event_index",
        "session_events",
        "sessions",
        "spans",
        "substrate_files",
        "substrate_versions",
        "tenants",
        "tool_batches",
        "tool_calls",
        "vault_secrets",
        "wakes",
      ]);

      // Agent versions are immutable: sessions pin the version they started with.
      await sql`INSERT INTO tenants (id, name) VALUES ('tnt_1', 't')`.execute(db);
      await sql`INSERT INTO agents (id, tenant_id, name, latest_version) VALUES ('agent_1', 'tnt_1', 'a', 1)`.execute(
        db,
      );
      await sql`INSERT INTO agent_versions (agent_id, version, tenant_id, spec) VALUES ('agent_1', 1, 'tnt_1', '{}')`.execute(
        db,
      );
      await expect(sql`UPDATE agent_versions SET spec = '{"x":1}'`.execute(db)).rejects.toThrow(/immutable/);
    } finally {
      await db.destroy();
    }
  });

  // Test runs copy one migrated template per test database (CREATE DATABASE … TEMPLATE) instead of
  // migrating each; after the test above, `url` is such a template.
  it("copy to a database as migrated as the original, with PUBLIC's privileges as restricted", async () => {
    await copyDatabase(new URL(url).pathname.slice(1), copyUrl);
    const original = createDb({ url, max: 1 });
    const copy = createDb({ url: copyUrl, max: 1 });
    try {
      expect(await migrateToLatest(copy)).toEqual([]);
      // Migration 0016 revoked TEMPORARY from PUBLIC; database ACLs are not in the copied files.
      expect(await publicPrivileges(original)).toEqual(["CONNECT"]);
      expect(await publicPrivileges(copy)).toEqual(["CONNECT"]);
      await expect(sql`UPDATE agent_versions SET spec = '{"x":1}'`.execute(copy)).rejects.toThrow(
        /immutable/,
      );
    } finally {
      await original.destroy();
      await copy.destroy();
    }
  });
});
