import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAgentVersion, repinSessions, reviseAgent } from "./agent-versions";
import { getSession } from "./session-queries";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 5 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

const withSystem = (spec: unknown, suffix: string) => {
  const value = spec as { name: string; system?: string };
  return { name: value.name, spec: { ...value, system: `${value.system ?? ""}${suffix}` } };
};

describe("agent versions", () => {
  it("makes consecutive versions under concurrent revisions, each built on the one before", async () => {
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const now = new Date();
    const results = await Promise.all(
      ["a", "b", "c"].map((suffix) =>
        reviseAgent(testDb.appDb, scope, (latest) => withSystem(latest.spec, suffix), now),
      ),
    );
    expect(results.map((result) => result?.version).sort()).toEqual([2, 3, 4]);
    const latest = await readAgentVersion(testDb.appDb, scope);
    expect(latest?.version).toBe(4);
    // Every edit survived: none was built on a version another writer had already replaced.
    const system = (latest?.spec as { system?: string } | undefined)?.system ?? "";
    expect([...system].sort()).toEqual(["a", "b", "c"]);
    expect((await readAgentVersion(testDb.appDb, scope, 1))?.spec).not.toHaveProperty("system");
  });

  it("writes nothing when the revision declines or throws", async () => {
    const scope = { tenantId: other.tenantId, agentId: other.agentId };
    const none = await reviseAgent(testDb.appDb, scope, () => null, new Date());
    expect(none).toMatchObject({ version: 1, created: false });
    await expect(
      reviseAgent(
        testDb.appDb,
        scope,
        () => {
          throw new Error("refused");
        },
        new Date(),
      ),
    ).rejects.toThrow("refused");
    expect((await readAgentVersion(testDb.appDb, scope))?.version).toBe(1);
  });

  it("finds nothing and changes nothing across tenants", async () => {
    const intruder = { tenantId: other.tenantId, agentId: seeded.agentId };
    expect(await readAgentVersion(testDb.appDb, intruder)).toBeNull();
    expect(await reviseAgent(testDb.appDb, intruder, (l) => withSystem(l.spec, "x"), new Date())).toBeNull();
    const session = await seedSession(testDb.db, seeded);
    const otherSession = await seedSession(testDb.db, seeded);
    expect(await repinSessions(testDb.appDb, { ...intruder, sessionId: session.id }, 2)).toBe(0);
    expect(await repinSessions(testDb.appDb, intruder, 2)).toBe(0);
    const mine = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    expect(await repinSessions(testDb.appDb, { ...mine, sessionId: session.id }, 2)).toBe(1);
    expect((await getSession(testDb.appDb, seeded.tenantId, otherSession.id))?.agent_version).toBe(1);
    // Without a session: every unfinished session of the agent that is not there yet.
    expect(await repinSessions(testDb.appDb, mine, 2)).toBeGreaterThanOrEqual(1);
    expect((await getSession(testDb.appDb, seeded.tenantId, otherSession.id))?.agent_version).toBe(2);
    expect((await getSession(testDb.appDb, seeded.tenantId, session.id))?.agent_version).toBe(2);
  });
});
