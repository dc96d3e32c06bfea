import { randomBytes } from "node:crypto";
import { Migrator, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createDb } from "./create-db";
import { dropDatabase, ensureDatabase } from "./database-admin";
import { MIGRATIONS } from "./migrations";

const event = (id: string, seq: number) => ({ id, session_id: "sesn_1", seq, type: "user.interrupt" });

describe("migration 0036 on a database with queued outbox rows", () => {
  it("relays the rows queued at the upgrade, and expands commits back into rows on the way down", async () => {
    const server = new URL(process.env.WL_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
    server.pathname = `/wl_test_outbox_${randomBytes(6).toString("hex")}`;
    const url = server.toString();
    await ensureDatabase(url);
    const db = createDb({ url, max: 1 });
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
      expect((await migrator.migrateTo("0035-append-opens-wake")).error).toBeUndefined();
      await sql`INSERT INTO outbox (tenant_id, msg_id, body, headers) VALUES
        ('tnt_1', 'sevt_1', ${JSON.stringify(event("sevt_1", 1))}, '{"traceparent":"t1"}'),
        ('tnt_1', 'sevt_2', ${JSON.stringify(event("sevt_2", 2))}, '{}')`.execute(db);

      expect((await migrator.migrateTo("0036-one-outbox-row-per-commit")).error).toBeUndefined();
      // One message per old row, as the relay reads them.
      const relayed = await sql<{ msg_id: string; body: string; headers: unknown }>`
        SELECT msg_id, body, headers FROM wl_outbox_relay('{}', 10)`.execute(db);
      expect(relayed.rows.map((row) => ({ ...row, body: JSON.parse(row.body) }))).toEqual([
        { msg_id: "sevt_1", body: event("sevt_1", 1), headers: { traceparent: "t1" } },
        { msg_id: "sevt_2", body: event("sevt_2", 2), headers: {} },
      ]);
      await sql`INSERT INTO outbox (tenant_id, messages, headers) VALUES
        ('tnt_1', ${JSON.stringify([event("sevt_3", 3), event("sevt_4", 4)])}, '{"traceparent":"t3"}')`.execute(
        db,
      );
      await expect(
        sql`INSERT INTO outbox (tenant_id, messages) VALUES ('tnt_1', '[]')`.execute(db),
      ).rejects.toThrow(/outbox_messages_check/);

      expect((await migrator.migrateTo("0035-append-opens-wake")).error).toBeUndefined();
      const rows = await sql<{ msg_id: string; body: unknown; headers: unknown }>`
        SELECT msg_id, body, headers FROM outbox ORDER BY id`.execute(db);
      expect(rows.rows).toEqual([
        { msg_id: "sevt_1", body: event("sevt_1", 1), headers: { traceparent: "t1" } },
        { msg_id: "sevt_2", body: event("sevt_2", 2), headers: {} },
        { msg_id: "sevt_3", body: event("sevt_3", 3), headers: { traceparent: "t3" } },
        { msg_id: "sevt_4", body: event("sevt_4", 4), headers: { traceparent: "t3" } },
      ]);
    } finally {
      await db.destroy();
      await dropDatabase(url);
    }
  });
});
