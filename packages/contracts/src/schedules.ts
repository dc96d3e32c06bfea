import { z } from "zod";
import { SessionModel } from "./api";
import { Id, Timestamp } from "./ids";

/*
 * Scheduled tasks (personal-agent "Scheduled Tasks"): the tool `create_scheduled_task` and
 * `POST /v1/agents/{id}/scheduled_tasks` take the same body, so an agent and a person schedule alike.
 * Which of `at` / `cron` is given, and whether it can fire, is checked by `parseSchedule`
 * (@wakeloop/session-core), which needs the time.
 */

export const CreateScheduledTaskRequest = z.strictObject({
  name: z.string().min(1).max(200).describe("Human-readable label"),
  task: z
    .string()
    .min(1)
    .max(20_000)
    .describe("The task prompt: the first user message of the fresh session each firing starts"),
  at: z
    .string()
    .max(64)
    .optional()
    .describe("One-shot: ISO 8601 time with offset, e.g. 2026-02-25T09:00:00Z"),
  cron: z
    .string()
    .max(200)
    .optional()
    .describe("Recurring: cron expression, 5 fields (or 6 with seconds), e.g. '0 9 * * MON'"),
  timezone: z
    .string()
    .max(100)
    .optional()
    .describe("IANA time zone the cron expression is read in, e.g. Europe/Paris (default UTC)"),
  token_limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Max tokens per firing; never more than the agent's budget (the default)"),
  model: SessionModel.optional().describe(
    "Model each firing's session runs, one the agent's provider serves (e.g. a cheaper one); default the agent's",
  ),
});
export type CreateScheduledTaskRequest = z.input<typeof CreateScheduledTaskRequest>;

export const ScheduledTask = z.object({
  id: Id,
  agent_id: Id,
  name: z.string(),
  task: z.string(),
  type: z.enum(["cron", "once"]),
  cron: z.string().nullable(),
  timezone: z.string().nullable(),
  at: Timestamp.nullable(),
  token_limit: z.number().int().positive().nullable(),
  /** The model each firing's session runs; null for the agent's. */
  model: z.string().nullable().default(null),
  enabled: z.boolean(),
  /** Null once the task has nothing left to fire (a one-shot that fired). */
  next_run: Timestamp.nullable(),
  last_run: Timestamp.nullable(),
  /** The session whose tool call created it; null when created through the API. */
  created_by_session_id: Id.nullable(),
  created_at: Timestamp,
});
export type ScheduledTask = z.infer<typeof ScheduledTask>;

export const ScheduledTaskList = z.object({ tasks: z.array(ScheduledTask) });
export type ScheduledTaskList = z.infer<typeof ScheduledTaskList>;

export const ListScheduledTasksQuery = z.strictObject({
  include_disabled: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
});

export const DeletedScheduledTask = z.object({ id: Id, deleted: z.literal(true) });
export type DeletedScheduledTask = z.infer<typeof DeletedScheduledTask>;
