import { outcomeTitle } from "@wakeloop/session-core";
import { type Kysely, sql } from "kysely";
import type { Database } from "./database";
import { newId } from "./ids";
import { withTenant } from "./tenant-scope";

/*
 * Outcomes and their graded attempts (migration 0019). Every function joins the caller's transaction,
 * so a tool's effect commits with its call and result.
 */

export interface SessionScope {
  tenantId: string;
  sessionId: string;
}

export interface Outcome {
  id: string;
  title: string;
  criteria: string[];
  /** The evaluator model's own instructions, when the definer gave some. */
  evaluatorPrompt: string | null;
  /** `tool`: `outcome_define`; `user`: a `user.define_outcome` event (its id is the outcome's). */
  source: "tool" | "user";
  createdAt: Date;
}

export interface CriterionResult {
  criterion: string;
  met: boolean;
  evidence: string;
}

export interface OutcomeEvaluation {
  outcomeId: string;
  iteration: number;
  wakeId: string | null;
  evaluator: "model" | "rubric";
  score: number;
  passed: boolean;
  feedback: string;
  criteriaResults: CriterionResult[];
  createdAt: Date;
}

export interface NewOutcome {
  title: string;
  criteria: string[];
  evaluatorPrompt: string | null;
}

export type NewOutcomeEvaluation = Omit<OutcomeEvaluation, "outcomeId" | "iteration" | "createdAt">;

export function defineOutcome(
  db: Kysely<Database>,
  scope: SessionScope,
  input: NewOutcome,
): Promise<Outcome> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .insertInto("outcomes")
      .values({
        id: newId("outcome"),
        tenant_id: scope.tenantId,
        session_id: scope.sessionId,
        title: input.title,
        criteria: JSON.stringify(input.criteria),
        evaluator_prompt: input.evaluatorPrompt,
      })
      .returning(["id", "created_at"])
      .executeTakeFirstOrThrow();
    return { id: row.id, ...input, source: "tool", createdAt: row.created_at };
  });
}

/** The session's active outcome: the latest defined, by a tool or by a person's event; null when none. */
export function activeOutcome(db: Kysely<Database>, scope: SessionScope): Promise<Outcome | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const { rows } = await sql<{
      id: string;
      title: string;
      criteria: unknown;
      evaluator_prompt: string | null;
      source: "tool" | "user";
      created_at: Date;
    }>`
      SELECT id, title, criteria, evaluator_prompt, 'tool' AS source, created_at FROM outcomes
        WHERE tenant_id = ${scope.tenantId} AND session_id = ${scope.sessionId}
      UNION ALL
      SELECT id, body->>'description',
          coalesce(body->'criteria', '[]'::jsonb), NULL, 'user', created_at
        FROM session_events
        WHERE tenant_id = ${scope.tenantId} AND session_id = ${scope.sessionId}
          AND type = 'user.define_outcome'
      ORDER BY created_at DESC, id DESC LIMIT 1`.execute(trx);
    const row = rows[0];
    if (row === undefined) return null;
    return {
      id: row.id,
      // A person's outcome is titled by its description's first line, as the session projection has it.
      title: row.source === "user" ? outcomeTitle(row.title) : row.title,
      criteria: row.criteria as string[],
      evaluatorPrompt: row.evaluator_prompt,
      source: row.source,
      createdAt: row.created_at,
    };
  });
}

/** Records the next graded attempt at an outcome (iteration = the last + 1). */
export function recordOutcomeEvaluation(
  db: Kysely<Database>,
  scope: SessionScope,
  outcomeId: string,
  input: NewOutcomeEvaluation,
): Promise<OutcomeEvaluation> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const last = await trx
      .selectFrom("outcome_evaluations")
      .select((eb) => eb.fn.max("iteration").as("n"))
      .where("tenant_id", "=", scope.tenantId)
      .where("outcome_id", "=", outcomeId)
      .executeTakeFirst();
    const row = await trx
      .insertInto("outcome_evaluations")
      .values({
        tenant_id: scope.tenantId,
        outcome_id: outcomeId,
        iteration: Number(last?.n ?? 0) + 1,
        session_id: scope.sessionId,
        wake_id: input.wakeId,
        evaluator: input.evaluator,
        score: input.score,
        passed: input.passed,
        feedback: input.feedback,
        criteria_results: JSON.stringify(input.criteriaResults),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toEvaluation(row);
  });
}

/** The outcome's latest `limit` graded attempts, oldest first (the order the trend reads them in). */
export function outcomeEvaluations(
  db: Kysely<Database>,
  scope: SessionScope,
  outcomeId: string,
  limit: number,
): Promise<OutcomeEvaluation[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const rows = await trx
      .selectFrom("outcome_evaluations")
      .selectAll()
      .where("tenant_id", "=", scope.tenantId)
      .where("session_id", "=", scope.sessionId)
      .where("outcome_id", "=", outcomeId)
      .orderBy("iteration", "desc")
      .limit(limit)
      .execute();
    return rows.reverse().map(toEvaluation);
  });
}

function toEvaluation(row: {
  outcome_id: string;
  iteration: number;
  wake_id: string | null;
  evaluator: "model" | "rubric";
  score: number;
  passed: boolean;
  feedback: string;
  criteria_results: unknown;
  created_at: Date;
}): OutcomeEvaluation {
  return {
    outcomeId: row.outcome_id,
    iteration: row.iteration,
    wakeId: row.wake_id,
    evaluator: row.evaluator,
    score: row.score,
    passed: row.passed,
    feedback: row.feedback,
    criteriaResults: row.criteria_results as CriterionResult[],
    createdAt: row.created_at,
  };
}
