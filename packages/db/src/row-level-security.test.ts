import { randomBytes } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@wakeloop/testing";
import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureAppRole } from "./app-role";
import { createDb } from "./create-db";
import { dropDatabase, ensureDatabase } from "./database-admin";
import { MIGRATIONS } from "./migrations";
import { migrateToLatest } from "./migrator";

/*
 * Guards for migrations to come: a table with a tenant_id column that lacks forced row security and
 * a policy is visible to every tenant, and a definer function without a fixed search_path or open to
 * PUBLIC is a way around the policies. New tables call `wl_isolate_tenant_table` (migration 0009).
 */

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(() => testDb.drop());

describe("row-level security", () => {
  it("is enabled, forced and keyed by a policy on every table with a tenant_id", async () => {
    const tables = await sql<{ table: string; enabled: boolean; forced: boolean; policies: number }>`
      SELECT c.relname AS table, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced,
        (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
      FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attname = 'tenant_id'
        AND NOT a.attisdropped
      ORDER BY c.relname`.execute(testDb.db);
    expect(tables.rows.length).toBeGreaterThanOrEqual(13);
    const unprotected = tables.rows.filter((row) => !row.enabled || !row.forced || row.policies === 0);
    expect(unprotected).toEqual([]);
  });

  it("leaves definer functions to the granted role only, with a fixed search_path", async () => {
    const functions = await sql<{ name: string; config: string[] | null; public_may_call: boolean }>`
      SELECT p.proname AS name, p.proconfig AS config,
        has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_call
      FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef`.execute(testDb.db);
    expect(functions.rows.length).toBeGreaterThan(0);
    for (const fn of functions.rows) {
      expect(fn.config, fn.name).toContain("search_path=public, pg_temp");
      expect(fn.public_may_call, fn.name).toBe(false);
    }
  });

  it("refuses to make a role that bypasses row security the services' role", async () => {
    const superuser = await sql<{ name: string }>`SELECT current_user AS name`.execute(testDb.db);
    await expect(ensureAppRole(testDb.db, { name: superuser.rows[0]?.name ?? "" })).rejects.toMatchObject({
      code: "app_role_unsafe",
    });
    await expect(ensureAppRole(testDb.db, { name: "Robert'); DROP" })).rejects.toMatchObject({
      code: "app_role_invalid",
    });
  });

  it("grants the service role again without error (the migrate CLI runs it every time)", async () => {
    const role = new URL(testDb.appUrl).username;
    await ensureAppRole(testDb.db, { name: role });
    const granted = await sql<{ may: boolean }>`
      SELECT has_table_privilege(${role}, 'sessions', 'SELECT') AND NOT has_table_privilege(${role}, 'tenants', 'SELECT') AS may`.execute(
      testDb.db,
    );
    expect(granted.rows[0]?.may).toBe(true);
  });
});

describe("migration 0009 on a database in use", () => {
  it("gives queued outbox rows their tenant and keeps every row valid under the new keys", async () => {
    const server = new URL(testDb.url);
    server.pathname = `/wl_test_upgrade_${randomBytes(6).toString("hex")}`;
    const url = server.toString();
    await ensureDatabase(url);
    const db = createDb({ url, max: 1 });
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
      expect((await migrator.migrateTo("0007-tool-batches")).error).toBeUndefined();
      for (const statement of [
        "INSERT INTO tenants (id, name) VALUES ('tnt_1', 't')",
        "INSERT INTO agents (id, tenant_id, name, latest_version) VALUES ('agent_1', 'tnt_1', 'a', 1)",
        "INSERT INTO agent_versions (agent_id, version, tenant_id, spec) VALUES ('agent_1', 1, 'tnt_1', '{}')",
        `INSERT INTO sessions (id, tenant_id, agent_id, agent_version, status, state)
          VALUES ('sesn_1', 'tnt_1', 'agent_1', 1, 'idle', '{}')`,
        `INSERT INTO session_events (session_id, seq, id, tenant_id, type, body, created_at)
          VALUES ('sesn_1', 1, 'sevt_1', 'tnt_1', 'user.interrupt', '{}', now())`,
        `INSERT INTO outbox (topic, msg_id, body) VALUES ('evt.tnt_1.sesn_1.user.interrupt', 'sevt_1', '{}')`,
      ]) {
        await sql.raw(statement).execute(db);
      }
      expect(await migrateToLatest(db)).toContain("0009-row-level-security");
      const outbox = await sql<{ tenant_id: string }>`SELECT tenant_id FROM outbox`.execute(db);
      expect(outbox.rows).toEqual([{ tenant_id: "tnt_1" }]);
    } finally {
      await db.destroy();
      await dropDatabase(url);
    }
  });
});
