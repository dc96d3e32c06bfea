import { createTestDatabase, type TestDatabase } from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, poolStats } from "./create-db";
import { isConnectionFailure } from "./pg-errors";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(() => testDb.drop());

describe("createDb", () => {
  it("reads int8 as a number and refuses one that would lose precision", async () => {
    const small = await sql<{ n: unknown }>`SELECT 9007199254740991::int8 AS n`.execute(testDb.db);
    expect(small.rows[0]?.n).toBe(Number.MAX_SAFE_INTEGER);
    await expect(sql`SELECT 9007199254740993::int8 AS n`.execute(testDb.db)).rejects.toThrow(RangeError);
    // The connection survives a refused value.
    expect((await sql<{ n: number }>`SELECT 1::int8 AS n`.execute(testDb.db)).rows).toEqual([{ n: 1 }]);
  });

  it("reports the queries waiting for a connection of its pool", async () => {
    const db = createDb({ url: testDb.url, max: 1 });
    try {
      let release = () => {};
      const holding = db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await expect.poll(() => poolStats(db).total).toBe(1);
      const queued = [sql`SELECT 1`.execute(db), sql`SELECT 2`.execute(db)];
      await expect.poll(() => poolStats(db)).toEqual({ total: 1, idle: 0, waiting: 2 });
      release();
      await Promise.all([holding, ...queued]);
      expect(poolStats(db)).toEqual({ total: 1, idle: 1, waiting: 0 });
    } finally {
      await db.destroy();
    }
  });

  it("survives its idle connections being killed, reports them, and reconnects", async () => {
    const idleErrors: Error[] = [];
    const db = createDb({ url: testDb.url, max: 2, onIdleError: (error) => idleErrors.push(error) });
    try {
      const backend = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
      await sql`SELECT pg_terminate_backend(${backend.rows[0]?.pid}::integer)`.execute(testDb.db);
      await expect.poll(() => idleErrors.length).toBeGreaterThan(0);
      expect((await sql<{ ok: number }>`SELECT 1 AS ok`.execute(db)).rows).toEqual([{ ok: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it("survives a connection killed between two statements of a transaction, failing only that one", async () => {
    const db = createDb({ url: testDb.url, max: 2 });
    try {
      const failed = db.transaction().execute(async (trx) => {
        const backend = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        await sql`SELECT pg_terminate_backend(${backend.rows[0]?.pid}::integer)`.execute(testDb.db);
        // The checked-out connection learns of its end between statements: an 'error' event that,
        // without a listener, would be an uncaught exception ending the process.
        await new Promise((resolve) => setTimeout(resolve, 200));
        return sql`SELECT 1`.execute(trx);
      });
      const error = await failed.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(isConnectionFailure(error), String(error)).toBe(true);
      expect((await sql<{ ok: number }>`SELECT 1 AS ok`.execute(db)).rows).toEqual([{ ok: 1 }]);
    } finally {
      await db.destroy();
    }
  });
});
