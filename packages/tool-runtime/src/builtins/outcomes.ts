import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { type ManagedToolSpec, managedTool, READ_ONLY_INLINE } from "./define";

// Outcomes and evaluators (openboa "outcomes"): what this session works toward, graded attempt by
// attempt, executed inline by the harness. Defining and grading write; reading is parallel-safe.

// As long and as many as a person's `user.define_outcome` may give, so every outcome can be graded.
const Criterion = z.string().trim().min(1).max(2_000);

export const OutcomeDefineInput = z.object({
  title: z.string().trim().min(1).max(200).describe("What done looks like, in one line"),
  criteria: z
    .array(Criterion)
    .min(1)
    .max(20)
    .describe("Success criteria, each one checkable on its own; an attempt passes when all are met"),
  evaluator_prompt: z
    .string()
    .trim()
    .min(1)
    .max(4_000)
    .optional()
    .describe("Instructions for the evaluator model that outcome_evaluate calls (how strict, what to check)"),
});
export type OutcomeDefineInput = z.infer<typeof OutcomeDefineInput>;

export const OutcomeGradeInput = z.object({
  criteria_results: z
    .array(
      z.object({ criterion: Criterion, met: z.boolean(), evidence: z.string().trim().min(1).max(2_000) }),
    )
    .min(1)
    .max(50)
    .describe("One verdict per success criterion of the active outcome, each with its evidence"),
  feedback: z.string().max(4_000).optional().describe("What the next attempt should change"),
});
export type OutcomeGradeInput = z.infer<typeof OutcomeGradeInput>;

export const OutcomeEvaluateInput = z.object({
  attempt: z
    .string()
    .trim()
    .min(1)
    .max(20_000)
    .describe("The attempt to grade: the work, its result or a summary"),
});
export type OutcomeEvaluateInput = z.infer<typeof OutcomeEvaluateInput>;

export const OutcomeHistoryInput = z.object({
  limit: z.number().int().min(1).max(50).default(10).describe("The latest this many graded attempts (1-50)"),
});
export type OutcomeHistoryInput = z.infer<typeof OutcomeHistoryInput>;

/** Graded attempts of one outcome are numbered in order, so writes to a session's outcome run one at a time. */
const writes = {
  permissionPolicy: "always_allow",
  effects: ["state"],
  destructive: false,
  idempotent: false,
  interruptBehavior: "block",
  parallelism: { parallelSafe: false, resourceKey: "outcome" },
  executor: "inline",
} as const satisfies Omit<ManagedToolSpec, "name" | "description" | "input" | "group">;

export const outcomeTools: ToolDefinition[] = [
  managedTool({
    ...writes,
    group: "outcomes",
    name: "outcome_define",
    description:
      "Define what this session works toward: a title and success criteria (replaces the active outcome). " +
      "While an outcome is active, shared writes such as memory_promote_note wait until its evaluator says " +
      "promotion is ready.",
    input: OutcomeDefineInput,
  }),
  managedTool({
    ...READ_ONLY_INLINE,
    group: "outcomes",
    name: "outcome_read",
    description:
      "Read the active outcome with its latest grade, trend (first_iteration, improving, stable, " +
      "regressing), promotion_ready and the next recommended step.",
    input: z.object({}),
  }),
  managedTool({
    ...writes,
    group: "outcomes",
    name: "outcome_grade",
    description:
      "Grade the current attempt against the active outcome's rubric: one met/unmet verdict with evidence " +
      "per criterion. Records the attempt and returns its score, the trend and promotion_ready.",
    input: OutcomeGradeInput,
  }),
  managedTool({
    ...writes,
    group: "evaluator",
    name: "outcome_evaluate",
    description:
      "Have the evaluator model grade an attempt against the active outcome's criteria, with the outcome's " +
      "own evaluator prompt. Records the attempt and returns its score, feedback, the trend and promotion_ready.",
    input: OutcomeEvaluateInput,
  }),
  managedTool({
    ...READ_ONLY_INLINE,
    group: "outcomes",
    name: "outcome_history",
    description:
      "List the active outcome's graded attempts, oldest first, with each one's score, verdict and evaluator.",
    input: OutcomeHistoryInput,
  }),
];
