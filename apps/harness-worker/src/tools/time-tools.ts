import { type ModelConfig, WakeloopError } from "@wakeloop/contracts";
import {
  cancelReminder,
  cancelScheduledTask,
  createReminder,
  createScheduledTask,
  type Database,
  listScheduledTasks,
  scheduledTaskView,
  setScheduledTaskEnabled,
} from "@wakeloop/db";
import { chosenModel, parseOneShot, parseSchedule } from "@wakeloop/session-core";
import {
  CancelReminderInput,
  CreateScheduledTaskInput,
  ListScheduledTasksInput,
  ScheduledTaskIdInput,
  SetReminderInput,
} from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

export interface TimeToolLimits {
  now: Date;
  /** The agent's model: a task's `model` must be one its provider serves. */
  agentModel: Pick<ModelConfig, "provider" | "id">;
  maxTasksPerAgent: number;
  maxRemindersPerSession: number;
}

/** Refusals the model can act on (change the schedule, cancel something first): error results. */
const CORRECTABLE = new Set(["invalid_request", "scheduled_task_limit", "reminder_limit"]);

export interface TimeToolScope {
  tenantId: string;
  agentId: string;
  sessionId: string;
}

/**
 * Reminders and scheduled tasks; `db` is the transaction the call's result commits in, when there is
 * one. A schedule that cannot fire (bad time, cron or zone, time past), a task over the agent's limit
 * or a reminder over the session's is an error result for the model to correct, and nothing is stored.
 */
export async function runTimeTool(
  db: Kysely<Database>,
  scope: TimeToolScope,
  call: { name: string; input: Record<string, unknown> },
  options: TimeToolLimits,
): Promise<ToolOutcome | null> {
  try {
    return await runTimeToolOrThrow(db, scope, call, options);
  } catch (error) {
    if (error instanceof WakeloopError && CORRECTABLE.has(error.code)) {
      return errorOutcome(error.message);
    }
    throw error;
  }
}

async function runTimeToolOrThrow(
  db: Kysely<Database>,
  scope: TimeToolScope,
  { name, input }: { name: string; input: Record<string, unknown> },
  { now, agentModel, maxTasksPerAgent, maxRemindersPerSession }: TimeToolLimits,
): Promise<ToolOutcome | null> {
  const agent = { tenantId: scope.tenantId, agentId: scope.agentId };
  switch (name) {
    case "set_reminder": {
      const { at, message } = SetReminderInput.parse(input);
      const when = parseOneShot(at, now);
      const row = await createReminder(db, {
        ...scope,
        message,
        at: when,
        maxPending: maxRemindersPerSession,
      });
      return jsonOutcome({ id: row.id, at: when.toISOString() });
    }
    case "cancel_reminder": {
      const { id } = CancelReminderInput.parse(input);
      return jsonOutcome({ deleted: await cancelReminder(db, { ...scope, id }) });
    }
    case "create_scheduled_task": {
      const body = CreateScheduledTaskInput.parse(input);
      const row = await createScheduledTask(db, {
        ...agent,
        createdBySessionId: scope.sessionId,
        name: body.name,
        prompt: body.task,
        spec: parseSchedule(body, now),
        maxTotalTokens: body.token_limit ?? null,
        model: chosenModel(agentModel, body.model),
        now,
        maxPerAgent: maxTasksPerAgent,
      });
      return jsonOutcome({ id: row.id, name: body.name, next_run: row.next_run_at?.toISOString() ?? null });
    }
    case "list_scheduled_tasks": {
      const { include_disabled } = ListScheduledTasksInput.parse(input);
      const rows = await listScheduledTasks(db, agent, { includeDisabled: include_disabled, limit: 500 });
      return jsonOutcome({ tasks: rows.map(scheduledTaskView) });
    }
    case "enable_scheduled_task":
    case "disable_scheduled_task": {
      const { id } = ScheduledTaskIdInput.parse(input);
      const row = await setScheduledTaskEnabled(db, agent, id, name === "enable_scheduled_task", now);
      if (row === null) return errorOutcome(`no scheduled task ${id} for this agent`);
      return jsonOutcome({ id: row.id, enabled: row.enabled });
    }
    case "cancel_scheduled_task": {
      const { id } = ScheduledTaskIdInput.parse(input);
      return jsonOutcome({ deleted: await cancelScheduledTask(db, agent, id) });
    }
    default:
      return null;
  }
}
