import { pathToFileURL } from "node:url";
import {
  activeOutcome,
  createSession,
  defineOutcome,
  listAgentSessions,
  outcomeEvaluations,
  recordOutcomeEvaluation,
} from "@wakeloop/db";
import { createTestDatabase, type LatencySummary, measureLatency, seedAgent } from "@wakeloop/testing";

/*
 * The outcome reads and writes on a real Postgres, in a throwaway database:
 *   npx tsx packages/db/bench/outcome-bench.ts
 * One agent whose sessions each have an outcome with many graded attempts. The posture read (active
 * outcome + last two attempts) is what the evaluator gate, permissions_check and each navigated session
 * with an outcome cost; every read runs as the services' role, so row security is on the path.
 */

export interface OutcomeBenchOptions {
  sessions?: number;
  attemptsPerOutcome?: number;
  /** Calls of each read or write. */
  iterations?: number;
}

export interface OutcomeBenchResult {
  sessions: number;
  attemptsPerOutcome: number;
  latencyMs: Record<string, LatencySummary>;
}

const attempt = (index: number) => ({
  wakeId: null,
  evaluator: "rubric" as const,
  score: (index % 10) / 10,
  passed: index % 10 === 9,
  feedback: "bench",
  criteriaResults: [{ criterion: "bench", met: index % 10 === 9, evidence: "bench" }],
});

export async function runOutcomeBench(options: OutcomeBenchOptions = {}): Promise<OutcomeBenchResult> {
  const sessions = options.sessions ?? 200;
  const attemptsPerOutcome = options.attemptsPerOutcome ?? 50;
  const iterations = options.iterations ?? 200;
  const testDb = await createTestDatabase({ max: 10 });
  try {
    const seeded = await seedAgent(testDb.db);
    const db = testDb.appDb;
    const scopes: Array<{ tenantId: string; sessionId: string; outcomeId: string }> = [];
    for (let index = 0; index < sessions; index++) {
      const session = await createSession(db, {
        tenantId: seeded.tenantId,
        agentId: seeded.agentId,
        agentVersion: seeded.agentVersion,
        environmentId: null,
        parentSessionId: null,
        title: "bench",
        metadata: {},
        budget: { max_total_tokens: null },
      });
      const scope = { tenantId: seeded.tenantId, sessionId: session.id };
      const outcome = await defineOutcome(db, scope, {
        title: "bench",
        criteria: ["bench"],
        evaluatorPrompt: null,
      });
      for (let n = 0; n < attemptsPerOutcome; n++)
        await recordOutcomeEvaluation(db, scope, outcome.id, attempt(n));
      scopes.push({ ...scope, outcomeId: outcome.id });
    }
    const pick = (index: number) => scopes[(index * 7919) % scopes.length] ?? scopes[0];
    const writable = scopes[0];
    if (writable === undefined) throw new Error("the bench needs at least one session");
    return {
      sessions,
      attemptsPerOutcome,
      latencyMs: {
        "outcome posture (active outcome + last 2 attempts)": await measureLatency(
          iterations,
          async (index) => {
            const scope = pick(index) ?? writable;
            const outcome = await activeOutcome(db, scope);
            if (outcome !== null) await outcomeEvaluations(db, scope, outcome.id, 2);
          },
        ),
        "outcome_history (50 attempts)": await measureLatency(iterations, (index) => {
          const scope = pick(index) ?? writable;
          return outcomeEvaluations(db, scope, scope.outcomeId, 50);
        }),
        "record a graded attempt": await measureLatency(iterations, (index) =>
          recordOutcomeEvaluation(db, writable, writable.outcomeId, attempt(index)),
        ),
        "session_list has_outcome (page of 20)": await measureLatency(iterations, () =>
          listAgentSessions(db, {
            tenantId: seeded.tenantId,
            agentId: seeded.agentId,
            limit: 20,
            hasOutcome: true,
          }),
        ),
      },
    };
  } finally {
    await testDb.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runOutcomeBench().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
