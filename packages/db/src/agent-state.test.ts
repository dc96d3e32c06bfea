import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteAgentState, getAgentState, listAgentStateKeys, setAgentState } from "./agent-state";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 5 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

describe("agent state", () => {
  it("stores, replaces, lists by literal prefix and deletes one agent's values", async () => {
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const db = testDb.appDb;
    await setAgentState(db, scope, "a_1", { n: 1 });
    await setAgentState(db, scope, "a_1", { n: 2 });
    await setAgentState(db, scope, "ab", null);
    await setAgentState(db, scope, "b", "x");
    expect(await getAgentState(db, scope, "a_1")).toEqual({ n: 2 });
    expect(await getAgentState(db, scope, "missing")).toBeNull();
    // `_` is a LIKE wildcard: taken literally, "a_" matches "a_1" and not "ab".
    expect(await listAgentStateKeys(db, scope, { prefix: "a_", limit: 10 })).toEqual(["a_1"]);
    expect(await listAgentStateKeys(db, scope, { limit: 2 })).toEqual(["a_1", "ab"]);
    expect(await deleteAgentState(db, scope, "b")).toBe(true);
    expect(await deleteAgentState(db, scope, "b")).toBe(false);
  });

  it("never reads or changes another tenant's values", async () => {
    const mine = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    await setAgentState(testDb.appDb, mine, "secret", "mine");
    // Another tenant naming this agent sees nothing and deletes nothing.
    const intruder = { tenantId: other.tenantId, agentId: seeded.agentId };
    expect(await getAgentState(testDb.appDb, intruder, "secret")).toBeNull();
    expect(await listAgentStateKeys(testDb.appDb, intruder, { limit: 10 })).toEqual([]);
    expect(await deleteAgentState(testDb.appDb, intruder, "secret")).toBe(false);
    expect(await getAgentState(testDb.appDb, mine, "secret")).toBe("mine");
  });
});
