import { CreateScheduledTaskRequest, type ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool } from "./define";

// Reminders and scheduled tasks (personal-agent "Reminders", "Scheduled Tasks"), executed inline by the
// harness: each writes its row in the transaction its result commits in, and the orchestrator fires
// what comes due. Group "automation", as OpenClaw's cron, so policies can name them together.

export const SetReminderInput = z.object({
  at: z.string().max(64).describe("ISO 8601 time with offset of when to fire, e.g. 2026-02-25T09:00:00Z"),
  message: z.string().min(1).max(10_000).describe("The message to inject into this session when it fires"),
});
export type SetReminderInput = z.infer<typeof SetReminderInput>;

const ScheduleId = z.string().min(1).max(128);

export const CancelReminderInput = z.object({ id: ScheduleId.describe("Reminder ID to cancel") });
export type CancelReminderInput = z.infer<typeof CancelReminderInput>;

export const CreateScheduledTaskInput = CreateScheduledTaskRequest;

export const ListScheduledTasksInput = z.object({
  include_disabled: z.boolean().default(false).describe("Include paused tasks. Default: false."),
});
export type ListScheduledTasksInput = z.infer<typeof ListScheduledTasksInput>;

export const ScheduledTaskIdInput = z.object({ id: ScheduleId.describe("Scheduled task ID") });
export type ScheduledTaskIdInput = z.infer<typeof ScheduledTaskIdInput>;

const common = {
  permissionPolicy: "always_allow",
  interruptBehavior: "block",
  group: "automation",
  executor: "inline",
} as const;
// Writes to one agent's schedules run one at a time, so a limit check never races a sibling call.
const write = { parallelSafe: false, resourceKey: "schedules" };
const read = { parallelSafe: true, resourceKey: "schedules" };

const taskIdTool = (name: string, description: string, destructive: boolean): ToolDefinition =>
  managedTool({
    ...common,
    name,
    description,
    input: ScheduledTaskIdInput,
    effects: ["schedule"],
    destructive,
    idempotent: true,
    parallelism: write,
  });

export const timeTools: ToolDefinition[] = [
  managedTool({
    ...common,
    name: "set_reminder",
    description:
      "Come back to this session later: at the given time the message is injected into this session as a " +
      "user message and wakes you. One-shot; for recurring work use create_scheduled_task. Returns { id, at }.",
    input: SetReminderInput,
    effects: ["schedule"],
    destructive: false,
    idempotent: false,
    parallelism: write,
  }),
  managedTool({
    ...common,
    name: "cancel_reminder",
    description: "Cancel a reminder of this session that has not fired yet. Returns { deleted }.",
    input: CancelReminderInput,
    effects: ["schedule"],
    destructive: true,
    idempotent: true,
    parallelism: write,
  }),
  managedTool({
    ...common,
    name: "create_scheduled_task",
    description:
      "Schedule an independent job of this agent: each firing starts a fresh session whose first message is " +
      "`task`. Give exactly one of `at` (one-shot) or `cron` (recurring, read in `timezone`). " +
      "Returns { id, name, next_run }.",
    input: CreateScheduledTaskInput,
    effects: ["schedule"],
    destructive: false,
    idempotent: false,
    parallelism: write,
  }),
  managedTool({
    ...common,
    name: "list_scheduled_tasks",
    description: "List this agent's scheduled tasks with their next and last run. Returns { tasks }.",
    input: ListScheduledTasksInput,
    effects: ["read"],
    destructive: false,
    idempotent: true,
    parallelism: read,
  }),
  taskIdTool(
    "enable_scheduled_task",
    "Resume a paused scheduled task; a cron task is next due at its next occurrence. Returns { id, enabled }.",
    false,
  ),
  taskIdTool(
    "disable_scheduled_task",
    "Pause a scheduled task without deleting it; nothing fires until it is enabled. Returns { id, enabled }.",
    false,
  ),
  taskIdTool(
    "cancel_scheduled_task",
    "Delete a scheduled task; sessions it already started stay. Returns { deleted }.",
    true,
  ),
];
