import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createAgentCode,
  deleteAgentCode,
  listAgentCode,
  listAgentTools,
  readAgentCode,
  readAgentCodeVersion,
  setAgentToolEnabled,
  updateAgentCode,
} from "./agent-code";
import { withTenant } from "./tenant-scope";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;

const author = { sessionId: "sesn_test", toolCallId: "sevt_test" };
const limits = { maxItems: 3 };
const tool = {
  description: "doubles n",
  code: "return args.n * 2;",
  schema: { type: "object", properties: { n: { type: "number" } } },
  requires: [],
};

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 5 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

describe("agent code store", () => {
  it("keeps every save as an immutable version and reads the current one or any earlier one", async () => {
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const db = testDb.appDb;
    expect(await createAgentCode(db, scope, "tool", "double_it", tool, author, limits)).toEqual({
      name: "double_it",
      version: 1,
    });
    const saved = await updateAgentCode(
      db,
      scope,
      "tool",
      "double_it",
      (current) => ({
        ...current,
        code: "return args.n + args.n;",
      }),
      author,
    );
    expect(saved).toEqual({ name: "double_it", version: 2 });
    expect(await readAgentCode(db, scope, "tool", "double_it")).toMatchObject({
      version: 2,
      code: "return args.n + args.n;",
      description: "doubles n",
      schema: tool.schema,
      enabled: true,
    });
    expect((await readAgentCodeVersion(db, scope, "tool", "double_it", 1))?.code).toBe("return args.n * 2;");
    // A library of the same name is another kind: no conflict.
    await createAgentCode(db, scope, "library", "double_it", { ...tool, schema: null }, author, limits);
    expect(
      (await listAgentCode(db, scope, "library", { includeDisabled: true })).map((item) => item.name),
    ).toEqual(["double_it"]);
  });

  it("refuses a taken name and the count limit without writing, inside the caller's transaction", async () => {
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const outcome = await withTenant(testDb.appDb, scope.tenantId, async (trx) => {
      await createAgentCode(trx, scope, "ui_component", "card", { ...tool, schema: null }, author, limits);
      const refusal = await createAgentCode(
        trx,
        scope,
        "ui_component",
        "card",
        { ...tool, schema: null },
        author,
        limits,
      ).then(
        () => null,
        (error: { code: string }) => error.code,
      );
      // The refusal did not abort the transaction: it can still write and commit.
      await createAgentCode(trx, scope, "ui_component", "card_2", { ...tool, schema: null }, author, limits);
      return refusal;
    });
    expect(outcome).toBe("agent_code_exists");
    await createAgentCode(
      testDb.appDb,
      scope,
      "ui_component",
      "card_3",
      { ...tool, schema: null },
      author,
      limits,
    );
    await expect(
      createAgentCode(
        testDb.appDb,
        scope,
        "ui_component",
        "card_4",
        { ...tool, schema: null },
        author,
        limits,
      ),
    ).rejects.toMatchObject({ code: "agent_code_limit" });
    const names = (await listAgentCode(testDb.appDb, scope, "ui_component", { includeDisabled: true })).map(
      (item) => item.name,
    );
    expect(names).toEqual(["card", "card_2", "card_3"]);
  });

  it("disables, enables and deletes; a deleted name starts again at version 1 and keeps its history", async () => {
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const db = testDb.appDb;
    await createAgentCode(db, scope, "tool", "toggled", tool, author, limits);
    expect(await setAgentToolEnabled(db, scope, "toggled", false)).toEqual({
      name: "toggled",
      enabled: false,
    });
    expect(
      (await listAgentCode(db, scope, "tool", { includeDisabled: false })).map((item) => item.name),
    ).not.toContain("toggled");
    expect(await listAgentTools(db, scope)).toContainEqual({
      name: "toggled",
      description: "doubles n",
      parameterSchema: tool.schema,
      version: 1,
      enabled: false,
    });
    expect(await setAgentToolEnabled(db, scope, "missing", true)).toBeNull();
    expect(await deleteAgentCode(db, scope, "tool", "toggled")).toBe(true);
    expect(await deleteAgentCode(db, scope, "tool", "toggled")).toBe(false);
    expect(await readAgentCode(db, scope, "tool", "toggled")).toBeNull();
    expect(await updateAgentCode(db, scope, "tool", "toggled", (current) => current, author)).toBeNull();
    expect(await createAgentCode(db, scope, "tool", "toggled", tool, author, limits)).toEqual({
      name: "toggled",
      version: 1,
    });
    const { rows } = await sql<{ versions: string }>`
      SELECT count(*) AS versions FROM agent_code_versions v JOIN agent_code c ON c.id = v.code_id
      WHERE c.name = 'toggled'`.execute(testDb.db);
    expect(Number(rows[0]?.versions)).toBe(2);
  });

  it("never shows or changes another tenant's code", async () => {
    const intruder = { tenantId: other.tenantId, agentId: seeded.agentId };
    expect(await readAgentCode(testDb.appDb, intruder, "tool", "double_it")).toBeNull();
    expect(await listAgentTools(testDb.appDb, intruder)).toEqual([]);
    expect(await deleteAgentCode(testDb.appDb, intruder, "tool", "double_it")).toBe(false);
    expect(await setAgentToolEnabled(testDb.appDb, intruder, "double_it", false)).toBeNull();
    await expect(
      createAgentCode(testDb.appDb, intruder, "tool", "planted", tool, author, limits),
    ).rejects.toThrow();
    const mine = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    expect((await readAgentCode(testDb.appDb, mine, "tool", "double_it"))?.enabled).toBe(true);
  });
});
