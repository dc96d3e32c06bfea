import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "./ids";

/*
 * Migration 0033 dropped the key to `tenants` of the tables a composite `(tenant_id, …)` key to their
 * parent already ties to a tenant. These tests hold what that key did: a row of an unknown tenant is
 * refused, and a tenant that owns rows cannot be deleted.
 */

let testDb: TestDatabase;
let seeded: SeededAgent;
let sessionId: string;
let wakeId: string;

const FOREIGN_KEY_VIOLATION = "23503";

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 2 });
  seeded = await seedAgent(testDb.db);
  sessionId = newId("session");
  wakeId = newId("wake");
  await insertSession(seeded.tenantId, sessionId);
  await insertWake(seeded.tenantId, wakeId, "queued");
});
afterAll(() => testDb.drop());

function insertSession(tenantId: string, id = newId("session")) {
  return testDb.db
    .insertInto("sessions")
    .values({
      id,
      tenant_id: tenantId,
      agent_id: seeded.agentId,
      agent_version: seeded.agentVersion,
      status: "idle",
      state: "{}",
      last_seq: 0,
    })
    .execute();
}

function insertWake(tenantId: string, id: string, status: "queued" | "completed") {
  return testDb.db
    .insertInto("wakes")
    .values({
      id,
      tenant_id: tenantId,
      session_id: sessionId,
      status,
      reason: "user_message",
      attempt: 1,
      due_at: new Date(),
    })
    .execute();
}

let seq = 0;
function insertEvent(tenantId: string, id = newId("event")) {
  return testDb.db
    .insertInto("session_events")
    .values({
      id,
      tenant_id: tenantId,
      session_id: sessionId,
      seq: ++seq,
      type: "user.message",
      body: "{}",
      created_at: new Date(),
    })
    .execute();
}

/** One row of each table that lost its tenant key, written for `tenantId` under the seeded parents. */
const INSERTS: Readonly<Record<string, (tenantId: string) => Promise<unknown>>> = {
  sessions: (tenantId) => insertSession(tenantId),
  session_events: (tenantId) => insertEvent(tenantId),
  // A session has one open wake at most: the seeded one.
  wakes: (tenantId) => insertWake(tenantId, newId("wake"), "completed"),
  tool_batches: (tenantId) =>
    testDb.db
      .insertInto("tool_batches")
      .values({
        id: newId("toolBatch"),
        tenant_id: tenantId,
        session_id: sessionId,
        wake_id: wakeId,
        plan: "{}",
      })
      .execute(),
  // A tool call is keyed by its tool-use event; its key to that event is checked at commit.
  tool_calls: (tenantId) =>
    testDb.db.transaction().execute(async (trx) => {
      const id = newId("event");
      await trx
        .insertInto("session_events")
        .values({
          id,
          tenant_id: seeded.tenantId,
          session_id: sessionId,
          seq: ++seq,
          type: "agent.tool_use",
          body: "{}",
          created_at: new Date(),
        })
        .execute();
      await trx
        .insertInto("tool_calls")
        .values({
          id,
          tenant_id: tenantId,
          session_id: sessionId,
          wake_id: wakeId,
          name: "bash",
          input: "{}",
          status: "planned",
          idempotent: false,
        })
        .execute();
    }),
  agent_state: (tenantId) =>
    testDb.db
      .insertInto("agent_state")
      .values({ tenant_id: tenantId, agent_id: seeded.agentId, key: newId("event"), value: "1" })
      .execute(),
};

describe("tenant keys", () => {
  it.each(Object.keys(INSERTS))("refuses a %s row of an unknown tenant", async (table) => {
    const insert = INSERTS[table];
    if (insert === undefined) throw new Error(`no insert for ${table}`);
    // The same row of the parents' tenant is accepted: only its tenant is wrong.
    await insert(seeded.tenantId);
    await expect(insert(newId("tenant"))).rejects.toMatchObject({ code: FOREIGN_KEY_VIOLATION });
  });

  it("refuses to delete a tenant that owns rows, and deletes one that owns none", async () => {
    for (const insert of Object.values(INSERTS)) await insert(seeded.tenantId);
    await expect(
      testDb.db.deleteFrom("tenants").where("id", "=", seeded.tenantId).execute(),
    ).rejects.toMatchObject({
      code: FOREIGN_KEY_VIOLATION,
    });
    const rows = await testDb.db
      .selectFrom("session_events")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("tenant_id", "=", seeded.tenantId)
      .executeTakeFirstOrThrow();
    expect(Number(rows.count)).toBeGreaterThan(0);

    const empty = newId("tenant");
    await testDb.db.insertInto("tenants").values({ id: empty, name: "empty tenant" }).execute();
    const deleted = await testDb.db.deleteFrom("tenants").where("id", "=", empty).executeTakeFirst();
    expect(deleted.numDeletedRows).toBe(1n);
  });
});
