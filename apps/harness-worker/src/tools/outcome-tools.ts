import {
  activeOutcome,
  type CriterionResult,
  type Database,
  defineOutcome,
  type Outcome,
  type OutcomeEvaluation,
  outcomeEvaluations,
  recordOutcomeEvaluation,
  type SessionScope,
} from "@wakeloop/db";
import { nextOutcomeStep, outcomeTrend, promotionReady } from "@wakeloop/session-core";
import {
  OutcomeDefineInput,
  OutcomeEvaluateInput,
  OutcomeGradeInput,
  OutcomeHistoryInput,
} from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { runLlmGenerate } from "./llm-generate";
import type { ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/*
 * The outcome tools (openboa "outcomes"). An attempt is graded by a rubric the agent fills in
 * (`outcome_grade`) or by an evaluator model with the outcome's own prompt (`outcome_evaluate`); both
 * record it, and the trend and promotion gate are read over the recorded attempts.
 */

/** How many attempts the trend and the gate read: the trend needs two, the history shows more. */
const POSTURE_ATTEMPTS = 2;

/** Tools whose writes reach beyond this session; gated on the evaluator while an outcome is active. */
export const EVALUATOR_GATED_TOOLS: ReadonlySet<string> = new Set([
  "memory_promote_note",
  "resources_promote_to_substrate",
  "resources_restore_version",
]);

export interface OutcomePosture {
  outcome_id: string;
  title: string;
  criteria: string[];
  source: Outcome["source"];
  iterations: number;
  latest: ReturnType<typeof attemptView> | null;
  trend: ReturnType<typeof outcomeTrend>;
  promotion_ready: boolean;
  next_step: string | null;
}

/** The session's outcome posture; null when it has no active outcome. */
export async function outcomePosture(
  db: Kysely<Database>,
  scope: SessionScope,
): Promise<OutcomePosture | null> {
  const outcome = await activeOutcome(db, scope);
  if (outcome === null) return null;
  return postureOf(outcome, await outcomeEvaluations(db, scope, outcome.id, POSTURE_ATTEMPTS));
}

function postureOf(outcome: Outcome, attempts: OutcomeEvaluation[]): OutcomePosture {
  const latest = attempts.at(-1);
  return {
    outcome_id: outcome.id,
    title: outcome.title,
    criteria: criteriaOf(outcome),
    source: outcome.source,
    iterations: latest?.iteration ?? 0,
    latest: latest === undefined ? null : attemptView(latest),
    trend: outcomeTrend(attempts),
    promotion_ready: promotionReady(attempts),
    next_step: nextOutcomeStep(attempts),
  };
}

/** The gate for an evaluator-gated tool: a refusal naming the next step, or null when it may run. */
export async function evaluatorGate(
  db: Kysely<Database>,
  scope: SessionScope,
  toolName: string,
): Promise<string | null> {
  if (!EVALUATOR_GATED_TOOLS.has(toolName)) return null;
  const posture = await outcomePosture(db, scope);
  if (posture === null || posture.promotion_ready) return null;
  return (
    `${toolName} is gated on the evaluator while outcome "${posture.title}" is active, and promotion is not ` +
    `ready (trend: ${posture.trend ?? "no attempt graded yet"}). Call ${posture.next_step} first.`
  );
}

/** The evaluator gates on the gated tools among `names`; no query unless the model called one. */
export async function evaluatorGates(
  db: Kysely<Database>,
  scope: SessionScope,
  names: readonly string[],
): Promise<Map<string, string>> {
  const gates = new Map<string, string>();
  for (const name of new Set(names)) {
    const refusal = await evaluatorGate(db, scope, name);
    if (refusal !== null) gates.set(name, refusal);
  }
  return gates;
}

export async function runOutcomeTool(
  ctx: ToolContext,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  const scope = { tenantId: ctx.view.tenantId, sessionId: ctx.view.sessionId };
  switch (name) {
    case "outcome_define": {
      const args = OutcomeDefineInput.parse(input);
      const outcome = await defineOutcome(ctx.db, scope, {
        title: args.title,
        criteria: args.criteria,
        evaluatorPrompt: args.evaluator_prompt ?? null,
      });
      return jsonOutcome({ outcome: postureOf(outcome, []) });
    }
    case "outcome_read":
      return jsonOutcome({ outcome: await outcomePosture(ctx.db, scope) });
    case "outcome_history": {
      const { limit } = OutcomeHistoryInput.parse(input);
      return withOutcome(ctx, scope, async (outcome) => {
        const attempts = await outcomeEvaluations(ctx.db, scope, outcome.id, limit);
        return jsonOutcome({
          outcome: postureOf(outcome, attempts.slice(-POSTURE_ATTEMPTS)),
          attempts: attempts.map(attemptView),
        });
      });
    }
    case "outcome_grade": {
      const args = OutcomeGradeInput.parse(input);
      return withOutcome(ctx, scope, async (outcome) => {
        const results = matchCriteria(criteriaOf(outcome), args.criteria_results);
        if (typeof results === "string") return errorOutcome(results);
        return record(ctx, scope, outcome, "rubric", results, args.feedback ?? "");
      });
    }
    case "outcome_evaluate": {
      const { attempt } = OutcomeEvaluateInput.parse(input);
      return withOutcome(ctx, scope, (outcome) => evaluate(ctx, scope, outcome, attempt));
    }
    default:
      return null;
  }
}

async function withOutcome(
  ctx: ToolContext,
  scope: SessionScope,
  run: (outcome: Outcome) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  const outcome = await activeOutcome(ctx.db, scope);
  return outcome === null
    ? errorOutcome("This session has no active outcome; define one with outcome_define first.")
    : run(outcome);
}

/** An outcome a person defined without criteria is graded on its title alone. */
function criteriaOf(outcome: Outcome): string[] {
  return outcome.criteria.length > 0 ? outcome.criteria : [outcome.title];
}

/** Exactly one verdict per criterion, in the outcome's order; otherwise what is missing or unknown. */
export function matchCriteria(criteria: string[], results: CriterionResult[]): CriterionResult[] | string {
  const byCriterion = new Map<string, CriterionResult>();
  for (const result of results) {
    if (!criteria.includes(result.criterion)) {
      return `"${result.criterion}" is not a criterion of the active outcome; its criteria are: ${JSON.stringify(criteria)}`;
    }
    if (byCriterion.has(result.criterion))
      return `"${result.criterion}" is graded twice; grade each criterion once`;
    byCriterion.set(result.criterion, result);
  }
  const missing = criteria.filter((criterion) => !byCriterion.has(criterion));
  if (missing.length > 0) return `every criterion needs a verdict; missing: ${JSON.stringify(missing)}`;
  return criteria.map((criterion) => byCriterion.get(criterion) as CriterionResult);
}

async function record(
  ctx: ToolContext,
  scope: SessionScope,
  outcome: Outcome,
  evaluator: OutcomeEvaluation["evaluator"],
  results: CriterionResult[],
  feedback: string,
): Promise<ToolOutcome> {
  const met = results.filter((result) => result.met).length;
  await recordOutcomeEvaluation(ctx.db, scope, outcome.id, {
    wakeId: ctx.writer.wakeId,
    evaluator,
    score: met / results.length,
    passed: met === results.length,
    feedback,
    criteriaResults: results,
  });
  return jsonOutcome({ outcome: await outcomePosture(ctx.db, scope) });
}

const EVALUATOR_SYSTEM =
  "You are the evaluator of an agent's work. Judge the attempt strictly against each success criterion, " +
  "citing evidence from the attempt; a criterion the attempt does not show as met is not met.";

/** The evaluator model's answer: one verdict per criterion, in the criteria's words. */
const EVALUATOR_SCHEMA = {
  type: "object",
  required: ["criteria_results", "feedback"],
  properties: {
    criteria_results: {
      type: "array",
      items: {
        type: "object",
        required: ["criterion", "met", "evidence"],
        properties: { criterion: { type: "string" }, met: { type: "boolean" }, evidence: { type: "string" } },
      },
    },
    feedback: { type: "string" },
  },
};

async function evaluate(
  ctx: ToolContext,
  scope: SessionScope,
  outcome: Outcome,
  attempt: string,
): Promise<ToolOutcome> {
  const criteria = criteriaOf(outcome);
  const answer = await runLlmGenerate(ctx, {
    system:
      outcome.evaluatorPrompt === null
        ? EVALUATOR_SYSTEM
        : `${EVALUATOR_SYSTEM}\n\n${outcome.evaluatorPrompt}`,
    prompt:
      `Outcome: ${outcome.title}\nSuccess criteria:\n${criteria.map((c) => `- ${c}`).join("\n")}\n\n` +
      `Attempt:\n${attempt}\n\nGive one verdict per criterion, using each criterion's exact words.`,
    schema: EVALUATOR_SCHEMA,
  });
  if (answer.isError) return answer;
  const { criteria_results, feedback } = (
    answer.result as { parsed: { criteria_results: CriterionResult[]; feedback: string } }
  ).parsed;
  const results = matchCriteria(criteria, criteria_results);
  if (typeof results === "string") {
    return { ...errorOutcome(`the evaluator's answer cannot be recorded: ${results}`), ...withUsage(answer) };
  }
  return { ...(await record(ctx, scope, outcome, "model", results, feedback)), ...withUsage(answer) };
}

function withUsage(answer: ToolOutcome): Pick<ToolOutcome, "usage"> {
  return answer.usage === undefined ? {} : { usage: answer.usage };
}

function attemptView(attempt: OutcomeEvaluation) {
  return {
    iteration: attempt.iteration,
    evaluator: attempt.evaluator,
    score: attempt.score,
    passed: attempt.passed,
    feedback: attempt.feedback,
    criteria_results: attempt.criteriaResults,
    wake_id: attempt.wakeId,
    graded_at: attempt.createdAt.toISOString(),
  };
}
