import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAgentSession, listAgentSessions, sessionHistoryChars } from "./session-navigation";
import { createSession } from "./session-queries";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 5 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

function child(parentSessionId: string) {
  return createSession(testDb.db, {
    tenantId: seeded.tenantId,
    agentId: seeded.agentId,
    agentVersion: 1,
    environmentId: null,
    parentSessionId,
    title: null,
    metadata: {},
    budget: { max_total_tokens: null },
  });
}

describe("session navigation reads", () => {
  it("lists one agent's sessions by lineage, with child counts, and never another tenant's", async () => {
    const root = await seedSession(testDb.db, seeded);
    const a = await child(root.id);
    const b = await child(root.id);
    const grandchild = await child(a.id);
    await seedSession(testDb.db, other);
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId, limit: 10 };
    const ids = async (input: Partial<Parameters<typeof listAgentSessions>[1]>) =>
      (await listAgentSessions(testDb.appDb, { ...scope, ...input })).sessions
        .map((s) => s.session.id)
        .sort();

    expect(await ids({})).toEqual([root.id, a.id, b.id, grandchild.id].sort());
    const near = (lineage: "related" | "parent" | "children" | "siblings") => ({
      near: { sessionId: a.id, parentSessionId: root.id, lineage },
    });
    expect(await ids(near("parent"))).toEqual([root.id]);
    expect(await ids(near("children"))).toEqual([grandchild.id]);
    expect(await ids(near("siblings"))).toEqual([b.id]);
    expect(await ids(near("related"))).toEqual([root.id, b.id, grandchild.id].sort());
    expect(await ids({ parentSessionId: root.id })).toEqual([a.id, b.id].sort());
    expect(await ids({ hasOutcome: true })).toEqual([]);
    expect(await ids({ status: "running" })).toEqual([]);
    expect(await ids({ activeMinutes: 5 })).toHaveLength(4);

    const found = await findAgentSession(testDb.appDb, scope, root.id);
    expect(found).toMatchObject({ childCount: 2, hasOutcome: false, environmentSpec: null });
    const paged = await listAgentSessions(testDb.appDb, { ...scope, limit: 3 });
    expect(paged.sessions).toHaveLength(3);
    expect(paged.nextAfterId).toBe(paged.sessions.at(-1)?.session.id);

    // Another tenant, or another agent of this tenant, finds nothing.
    expect(
      await findAgentSession(testDb.appDb, { tenantId: other.tenantId, agentId: seeded.agentId }, root.id),
    ).toBeNull();
    expect(
      await findAgentSession(testDb.appDb, { tenantId: seeded.tenantId, agentId: other.agentId }, root.id),
    ).toBeNull();
    expect((await listAgentSessions(testDb.appDb, { ...scope, tenantId: other.tenantId })).sessions).toEqual(
      [],
    );
    expect(await sessionHistoryChars(testDb.appDb, { tenantId: seeded.tenantId, sessionId: root.id })).toBe(
      0,
    );
  });
});
