import { createServer, type Socket } from "node:net";
import { createTestDatabase, type TestDatabase } from "@wakeloop/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "./create-db";
import { isConnectionFailure } from "./pg-errors";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(() => testDb.drop());

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function failureOf(query: Promise<unknown>): Promise<unknown> {
  return query.then(
    () => {
      throw new Error("the query succeeded");
    },
    (error: unknown) => error,
  );
}

describe("isConnectionFailure", () => {
  it("is true for a refused connection", async () => {
    const db = createDb({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/none` });
    try {
      expect(isConnectionFailure(await failureOf(sql`SELECT 1`.execute(db)))).toBe(true);
    } finally {
      await db.destroy();
    }
  });

  it("is true for a server that accepts but never answers, once the connect timeout passes", async () => {
    const accepted: Socket[] = [];
    const silent = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = silent.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    const db = createDb({ url: `postgres://postgres@127.0.0.1:${address.port}/none`, connectTimeoutMs: 200 });
    try {
      expect(isConnectionFailure(await failureOf(sql`SELECT 1`.execute(db)))).toBe(true);
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await db.destroy();
    }
  });

  it("is true for a backend terminated by an administrator (57P01) mid-query", async () => {
    const db = createDb({ url: testDb.url, max: 1 });
    try {
      const backend = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
      const slow = failureOf(sql`SELECT pg_sleep(30)`.execute(db));
      await expect
        .poll(async () => {
          const active = await sql<{ n: number }>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE pid = ${backend.rows[0]?.pid} AND query LIKE '%pg_sleep%'`.execute(testDb.db);
          return active.rows[0]?.n;
        })
        .toBe(1);
      await sql`SELECT pg_terminate_backend(${backend.rows[0]?.pid}::integer)`.execute(testDb.db);
      expect(isConnectionFailure(await slow)).toBe(true);
    } finally {
      await db.destroy();
    }
  });

  it("is false for a wrong statement, a constraint violation and non-errors", async () => {
    expect(isConnectionFailure(await failureOf(sql`SELECT * FROM no_such_table`.execute(testDb.db)))).toBe(
      false,
    );
    expect(isConnectionFailure(await failureOf(sql`SELECT 1/0`.execute(testDb.db)))).toBe(false);
    expect(isConnectionFailure(new Error("boom"))).toBe(false);
    expect(isConnectionFailure("ECONNREFUSED")).toBe(false);
  });

  it("looks through causes", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(isConnectionFailure(new Error("query failed", { cause: refused }))).toBe(true);
    expect(isConnectionFailure(new pg.DatabaseError("too many clients", 0, "error"))).toBe(false);
  });
});
