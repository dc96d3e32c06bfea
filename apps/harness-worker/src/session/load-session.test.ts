import type { AcquiredLease } from "@wakeloop/db";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedLease,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSpecs } from "./load-session";

let testDb: TestDatabase;
let seeded: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 4 });
  seeded = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

/** The lease a worker takes for a new session of the seeded agent. */
async function lease(): Promise<AcquiredLease> {
  return (await seedLease(testDb, seeded)).lease;
}

/** The same session as pinned to another version of its agent, whose spec has `system`. */
function onVersion(taken: AcquiredLease, version: number, system: string): AcquiredLease {
  return {
    ...taken,
    session: { ...taken.session, agent_version: version },
    agentSpec: { ...(taken.agentSpec as Record<string, unknown>), system },
  };
}

describe("sessionSpecs", () => {
  it("reads each agent version's own spec, and a session's own model only for that session", async () => {
    const first = await lease();
    const version = first.session.agent_version;
    const spec = sessionSpecs(first).agent;
    expect(sessionSpecs(await lease()).agent).toEqual(spec);

    const next = sessionSpecs(onVersion(first, version + 1, "A newer prompt.")).agent;
    expect(next.system).toBe("A newer prompt.");
    expect(sessionSpecs(first).agent.system).toBe(spec.system);

    const ownModel = sessionSpecs({ ...first, session: { ...first.session, model: "own-model" } });
    expect(ownModel.agent.model.id).toBe("own-model");
    expect(sessionSpecs(first).agent.model.id).toBe(spec.model.id);
    expect(spec.model.id).not.toBe("own-model");
  });
});
