import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "./create-db";
import { append } from "./event-store";
import { getSession, readEvents } from "./session-queries";
import { withTenant } from "./tenant-scope";

let testDb: TestDatabase;
let a: SeededAgent;
let b: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase();
  [a, b] = [await seedAgent(testDb.db), await seedAgent(testDb.db)];
});
afterAll(() => testDb.drop());

const setting = sql<{ tenant: string | null }>`SELECT current_setting('wakeloop.tenant_id', true) AS tenant`;

function newSession(seeded: SeededAgent) {
  return seedSession(testDb.appDb, seeded);
}

describe("withTenant", () => {
  it("scopes one transaction and leaves nothing on the pooled connection", async () => {
    const single = createDb({ url: testDb.appUrl, max: 1 });
    try {
      const inside = await withTenant(single, a.tenantId, (trx) => setting.execute(trx));
      expect(inside.rows[0]?.tenant).toBe(a.tenantId);
      const after = await setting.execute(single);
      expect(after.rows[0]?.tenant ?? "").toBe("");
    } finally {
      await single.destroy();
    }
  });

  it("joins a transaction scoped to the same tenant and refuses a second tenant or none", async () => {
    await withTenant(testDb.appDb, a.tenantId, async (trx) => {
      await expect(withTenant(trx, a.tenantId, async () => "joined")).resolves.toBe("joined");
      await expect(withTenant(trx, b.tenantId, async () => "crossed")).rejects.toMatchObject({
        code: "tenant_scope_mismatch",
      });
    });
    await expect(withTenant(testDb.appDb, "", async () => "none")).rejects.toMatchObject({
      code: "tenant_scope_invalid",
    });
  });

  it("commits its work whole or rolls it all back, and a nested write joins it", async () => {
    const session = await newSession(a);
    const say = (text: string) => ({
      tenantId: a.tenantId,
      sessionId: session.id,
      events: [{ type: "user.message" as const, content: [{ type: "text" as const, text }] }],
    });
    await expect(
      withTenant(testDb.appDb, a.tenantId, async (trx) => {
        await append(trx, say("rolled back"));
        // A nested helper joins the same transaction rather than committing on its own.
        await withTenant(trx, a.tenantId, (nested) => append(nested, say("also rolled back")));
        throw new Error("the caller failed");
      }),
    ).rejects.toThrow("the caller failed");
    expect(await readEvents(testDb.appDb, { tenantId: a.tenantId, sessionId: session.id })).toEqual([]);

    await withTenant(testDb.appDb, a.tenantId, async (trx) => {
      await append(trx, say("kept"));
      await withTenant(trx, a.tenantId, (nested) => append(nested, say("kept too")));
    });
    const kept = await readEvents(testDb.appDb, { tenantId: a.tenantId, sessionId: session.id });
    expect(kept.map((event) => event.seq)).toEqual([1, 2]);
  });

  it("lets the service role append and read its tenant's session, and hides it from another", async () => {
    const session = await newSession(a);
    await append(testDb.appDb, {
      tenantId: a.tenantId,
      sessionId: session.id,
      events: [{ type: "user.message", content: [{ type: "text", text: "hi" }] }],
    });
    expect(await readEvents(testDb.appDb, { tenantId: a.tenantId, sessionId: session.id })).toHaveLength(1);
    // A query without its tenant filter still sees only the scoped tenant's rows.
    const seenByB = await withTenant(testDb.appDb, b.tenantId, (trx) =>
      trx.selectFrom("sessions").select("id").execute(),
    );
    expect(seenByB.map((row) => row.id)).not.toContain(session.id);
    expect(await getSession(testDb.appDb, b.tenantId, session.id)).toBeNull();
    await expect(
      append(testDb.appDb, {
        tenantId: b.tenantId,
        sessionId: session.id,
        events: [{ type: "user.message", content: [{ type: "text", text: "mine now" }] }],
      }),
    ).rejects.toMatchObject({ code: "session_not_found" });
  });
});
