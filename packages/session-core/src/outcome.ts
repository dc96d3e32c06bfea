/** How an outcome's graded attempts are moving (openboa "outcomes"): the latest against the one before. */
export type OutcomeTrend = "first_iteration" | "improving" | "stable" | "regressing";

/** One graded attempt, as much of it as the trend and the promotion gate read. */
export interface GradedAttempt {
  /** 0..1: the share of the success criteria the evaluator found met. */
  score: number;
  /** The evaluator's verdict that the attempt meets the outcome. */
  passed: boolean;
}

/** Score differences at or below this are noise, not a change of direction. */
export const TREND_TOLERANCE = 0.01;

/** The trend of attempts in the order they were graded; null before the first grade. */
export function outcomeTrend(attempts: readonly GradedAttempt[]): OutcomeTrend | null {
  const latest = attempts.at(-1);
  const previous = attempts.at(-2);
  if (latest === undefined) return null;
  if (previous === undefined) return "first_iteration";
  const delta = latest.score - previous.score;
  if (delta > TREND_TOLERANCE) return "improving";
  if (delta < -TREND_TOLERANCE) return "regressing";
  return "stable";
}

/**
 * Whether shared writes (memory promotion) are safe for this outcome: the latest attempt passed and did
 * not fall back from the one before. With no grade yet nothing is known, so nothing is promoted.
 */
export function promotionReady(attempts: readonly GradedAttempt[]): boolean {
  const latest = attempts.at(-1);
  return latest?.passed === true && outcomeTrend(attempts) !== "regressing";
}

/** The next step the evaluator posture points to (openboa `nextOutcomeStep`). */
export function nextOutcomeStep(attempts: readonly GradedAttempt[]): string | null {
  if (promotionReady(attempts)) return null;
  const trend = outcomeTrend(attempts);
  if (trend === null) return "outcome_evaluate";
  return trend === "stable" || trend === "regressing" ? "outcome_history" : "outcome_evaluate";
}

/** Longest outcome title: a person's outcome is titled by its description's first line, cut to this. */
const OUTCOME_TITLE_MAX = 200;

/** The title of an outcome a person defined (`user.define_outcome`): its description's first line. */
export function outcomeTitle(description: string): string {
  return (description.split("\n", 1)[0] ?? "").slice(0, OUTCOME_TITLE_MAX);
}

/**
 * What the model reads for an outcome a person defined: a user turn with the outcome and its success
 * criteria, so the work it wakes for is the outcome's.
 */
export function outcomeMessage(outcome: {
  description: string;
  criteria?: readonly string[] | undefined;
}): string {
  const criteria = outcome.criteria ?? [];
  const lines = [`Outcome to work toward (defined by the user):\n${outcome.description}`];
  if (criteria.length > 0) lines.push(`Success criteria:\n${criteria.map((line) => `- ${line}`).join("\n")}`);
  return lines.join("\n\n");
}
