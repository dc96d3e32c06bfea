import { createTestDatabase, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expireIdempotencyKeys } from "./idempotency-keys";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});

afterAll(async () => {
  await testDb?.drop();
});

describe("idempotency key retention", () => {
  it("deletes only the keys older than the retry window", async () => {
    const { tenantId } = await seedAgent(testDb.db);
    const now = new Date("2026-11-22T12:00:00Z");
    const row = (key: string, ageMs: number) => ({
      tenant_id: tenantId,
      key,
      request_hash: "h",
      status_code: 202,
      response: "{}",
      created_at: new Date(now.getTime() - ageMs),
    });
    await testDb.db
      .insertInto("idempotency_keys")
      .values([row("old", 25 * 3_600_000), row("fresh", 3_600_000)])
      .execute();
    expect(await expireIdempotencyKeys(testDb.db, now, 24 * 3_600_000)).toBe(1);
    const left = await testDb.db.selectFrom("idempotency_keys").select("key").execute();
    expect(left.map((r) => r.key)).toEqual(["fresh"]);
  });
});
