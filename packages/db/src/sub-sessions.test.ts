import { WakeloopError } from "@wakeloop/contracts";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append } from "./event-store";
import { readEvents } from "./session-queries";
import { answerWaits, type ChildFacts, completeChildSession, spawnChildSession } from "./sub-sessions";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 8 });
});
afterAll(() => testDb.drop());

async function parentWithChild(seeded: SeededAgent) {
  const parent = await seedSession(testDb.appDb, seeded);
  const seen: ChildFacts[] = [];
  const spawn = (maxChildren = 10, model: string | null = null) =>
    spawnChildSession(testDb.appDb, {
      tenantId: seeded.tenantId,
      parent: { sessionId: parent.id, agentId: seeded.agentId, environmentId: null, depth: 0 },
      task: "look into it",
      title: null,
      metadata: {},
      terms: (facts) => {
        seen.push(facts);
        return { budget: { max_total_tokens: 500 }, model };
      },
      maxChildren,
    });
  return { parent, child: await spawn(), spawn, seen };
}

const types = async (tenantId: string, sessionId: string) =>
  (await readEvents(testDb.appDb, { tenantId, sessionId })).map((event) => event.type);

describe("sub-sessions in Postgres", () => {
  it("a child is a session one level down with its task as first message and its carved budget", async () => {
    const seeded = await seedAgent(testDb.db);
    const { parent, child } = await parentWithChild(seeded);
    expect(child).toMatchObject({ parent_session_id: parent.id, depth: 1 });
    expect(child.state.budget).toEqual({ max_total_tokens: 500 });
    expect(await types(seeded.tenantId, child.id)).toEqual(["user.message"]);
  });

  it("decides a child's terms from its agent and what the parent gave, siblings of this step included", async () => {
    const seeded = await seedAgent(testDb.db);
    const { parent, spawn, seen } = await parentWithChild(seeded);
    // The first child's `session.child_created` has not committed to the parent: its 500 still count.
    const second = await spawn(10, "fake-model-mini");
    expect(seen.map((facts) => facts.delegatedTokens)).toEqual([0, 500]);
    expect(seen[0]?.agentModel).toEqual({ provider: "openai_compatible", id: "fake-model" });
    expect(second.model).toBe("fake-model-mini");
    await append(testDb.appDb, {
      tenantId: seeded.tenantId,
      sessionId: parent.id,
      events: [{ type: "session.child_created", child_session_id: second.id, token_budget: 500 }],
    });
    // Once recorded, the parent's projection holds it and it is not counted twice.
    await spawn();
    expect(seen.at(-1)?.delegatedTokens).toBe(1_000);
  });

  it("charges the parent what a finished child spent in place of the budget it held", async () => {
    const seeded = await seedAgent(testDb.db);
    const { parent, child } = await parentWithChild(seeded);
    const { tenantId } = seeded;
    await append(testDb.appDb, {
      tenantId,
      sessionId: parent.id,
      events: [{ type: "session.child_created", child_session_id: child.id, token_budget: 500 }],
    });
    await append(testDb.appDb, {
      tenantId,
      sessionId: child.id,
      events: [
        {
          type: "session.usage",
          usage: {
            input_tokens: 100,
            output_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
          budget: { max_total_tokens: 500 },
        },
        { type: "session.status_terminated", reason: "completed" },
      ],
    });
    await completeChildSession(testDb.appDb, { tenantId, sessionId: child.id });
    const events = await readEvents(testDb.appDb, { tenantId, sessionId: parent.id });
    expect(events.find((event) => event.type === "session.child_completed")).toMatchObject({
      tokens_used: 120,
      token_budget: 500,
    });
    const row = await testDb.db
      .selectFrom("sessions")
      .select("state")
      .where("id", "=", parent.id)
      .executeTakeFirst();
    expect(row?.state).toMatchObject({ delegated_tokens: 120 });
  });

  it("refuses a spawn past the children limit and writes nothing", async () => {
    const seeded = await seedAgent(testDb.db);
    const { parent, spawn } = await parentWithChild(seeded);
    const refused = await spawn(1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WakeloopError);
    expect((refused as WakeloopError).code).toBe("sub_session_limit");
    const children = await testDb.db
      .selectFrom("sessions")
      .select("id")
      .where("parent_session_id", "=", parent.id)
      .execute();
    expect(children).toHaveLength(1);
  });

  it("tells the parent once, however many deliveries race, and answers its wait once", async () => {
    const seeded = await seedAgent(testDb.db);
    const { parent, child } = await parentWithChild(seeded);
    const target = { tenantId: seeded.tenantId, sessionId: child.id };
    // Not finished yet: nothing to tell.
    expect(await completeChildSession(testDb.appDb, target)).toBeNull();
    await append(testDb.appDb, {
      tenantId: seeded.tenantId,
      sessionId: parent.id,
      events: [{ type: "agent.custom_tool_use", name: "wait_for_sessions", input: { ids: [child.id] } }],
    });
    await append(testDb.appDb, {
      tenantId: seeded.tenantId,
      sessionId: child.id,
      events: [
        { type: "agent.message", content: [{ type: "text", text: "found it" }] },
        { type: "session.status_terminated", reason: "completed" },
      ],
    });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => completeChildSession(testDb.appDb, target)),
    );
    expect(outcomes.filter((outcome) => outcome !== null)).toEqual([
      { status: "completed", result: "found it", parentSessionId: parent.id },
    ]);
    expect(await answerWaits(testDb.appDb, { tenantId: seeded.tenantId, sessionId: parent.id })).toBe(0);
    const events = await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId: parent.id });
    expect(events.filter((event) => event.type === "session.child_completed")).toHaveLength(1);
    const answers = events.filter((event) => event.type === "user.custom_tool_result");
    expect(answers).toHaveLength(1);
    expect(JSON.stringify(answers[0])).toContain("found it");
  });
});
