import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { append } from "./event-store";
import { activeOutcome, defineOutcome, outcomeEvaluations, recordOutcomeEvaluation } from "./outcomes";
import { findAgentSession } from "./session-navigation";

let testDb: TestDatabase;
let seeded: SeededAgent;
let other: SeededAgent;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 5 });
  seeded = await seedAgent(testDb.db);
  other = await seedAgent(testDb.db);
});
afterAll(() => testDb.drop());

const attempt = (score: number, passed: boolean) => ({
  wakeId: null,
  evaluator: "rubric" as const,
  score,
  passed,
  feedback: passed ? "done" : "not yet",
  criteriaResults: [{ criterion: "tests pass", met: passed, evidence: "ran them" }],
});

describe("outcomes", () => {
  it("reads the latest outcome, from a user.define_outcome event or from outcome_define", async () => {
    const session = await seedSession(testDb.db, seeded);
    const scope = { tenantId: seeded.tenantId, sessionId: session.id };
    expect(await activeOutcome(testDb.appDb, scope)).toBeNull();

    const [event] = await append(testDb.appDb, {
      ...scope,
      events: [
        {
          type: "user.define_outcome",
          description: "Ship the report\nwith charts",
          criteria: ["has charts"],
        },
      ],
    });
    expect(await activeOutcome(testDb.appDb, scope)).toMatchObject({
      id: event?.id,
      title: "Ship the report",
      criteria: ["has charts"],
      evaluatorPrompt: null,
      source: "user",
    });

    const defined = await defineOutcome(testDb.appDb, scope, {
      title: "Fix the bug",
      criteria: ["tests pass", "no regressions"],
      evaluatorPrompt: "Be strict.",
    });
    expect(await activeOutcome(testDb.appDb, scope)).toEqual(defined);
    const navigated = await findAgentSession(
      testDb.appDb,
      { tenantId: seeded.tenantId, agentId: seeded.agentId },
      session.id,
    );
    expect(navigated?.hasOutcome).toBe(true);
    // Another tenant sees nothing of it.
    expect(await activeOutcome(testDb.appDb, { tenantId: other.tenantId, sessionId: session.id })).toBeNull();
  });

  it("numbers graded attempts per outcome and reads the latest ones oldest first", async () => {
    const session = await seedSession(testDb.db, seeded);
    const scope = { tenantId: seeded.tenantId, sessionId: session.id };
    const outcome = await defineOutcome(testDb.appDb, scope, {
      title: "t",
      criteria: [],
      evaluatorPrompt: null,
    });
    const first = await recordOutcomeEvaluation(testDb.appDb, scope, outcome.id, attempt(0.2, false));
    await recordOutcomeEvaluation(testDb.appDb, scope, outcome.id, attempt(0.5, false));
    await recordOutcomeEvaluation(testDb.appDb, scope, outcome.id, attempt(1, true));
    expect(first).toMatchObject({ outcomeId: outcome.id, iteration: 1, score: 0.2, passed: false });
    const history = await outcomeEvaluations(testDb.appDb, scope, outcome.id, 2);
    expect(history.map((row) => [row.iteration, row.score, row.passed])).toEqual([
      [2, 0.5, false],
      [3, 1, true],
    ]);
    expect(history[1]?.criteriaResults).toEqual([
      { criterion: "tests pass", met: true, evidence: "ran them" },
    ]);
  });

  it("refuses an out-of-range score and stores nothing", async () => {
    const session = await seedSession(testDb.db, seeded);
    const scope = { tenantId: seeded.tenantId, sessionId: session.id };
    const outcome = await defineOutcome(testDb.appDb, scope, {
      title: "t",
      criteria: [],
      evaluatorPrompt: null,
    });
    await expect(
      recordOutcomeEvaluation(testDb.appDb, scope, outcome.id, attempt(1.5, true)),
    ).rejects.toThrow();
    expect(await outcomeEvaluations(testDb.appDb, scope, outcome.id, 10)).toEqual([]);
  });
});
