import { ListScheduledTasksQuery, WakeloopError } from "@wakeloop/contracts";
import {
  cancelScheduledTask,
  createScheduledTask,
  getScheduledTask,
  listScheduledTasks,
  type ScheduleRow,
  scheduledTaskView,
  setScheduledTaskEnabled,
} from "@wakeloop/db";
import { chosenModel, parseSchedule } from "@wakeloop/session-core";
import type { RouteDeps } from "../gateway-deps";
import { notFound } from "../http/api-error";
import { defineRoute, type Route } from "../http/route";
import { findAgent } from "./agent-store";

const TASK_PATH = "/v1/agents/{id}/scheduled_tasks/{task_id}";

/**
 * Scheduled tasks for people (the agent's own are the `*_scheduled_task` tools, on the same rows):
 * what is sent is checked like the tool's input, and a schedule that cannot fire or a task over the
 * agent's limit is a 4xx with nothing stored. The orchestrator fires them (docs/scheduling.md).
 */
export function scheduledTaskRoutes({ db, clock, config }: RouteDeps): Route[] {
  const found = (row: ScheduleRow | null, id: string) => {
    if (row === null) throw notFound("scheduled task", id);
    return scheduledTaskView(row);
  };
  const toggle = (enabled: boolean) =>
    defineRoute({
      method: "POST",
      path: `${TASK_PATH}/${enabled ? "enable" : "disable"}`,
      operationId: enabled ? "enableScheduledTask" : "disableScheduledTask",
      summary: enabled
        ? "Resume a paused task; a cron task is next due at its next occurrence from now"
        : "Pause a task without deleting it; occurrences while paused do not fire",
      tag: "scheduled tasks",
      access: "member",
      response: { status: 200, body: "ScheduledTask", description: "The task" },
      handler: async ({ principal, params }) => {
        const scope = { tenantId: principal.tenantId, agentId: params.id };
        return found(
          await setScheduledTaskEnabled(db, scope, params.task_id, enabled, clock.now()),
          params.task_id,
        );
      },
    });
  return [
    defineRoute({
      method: "POST",
      path: "/v1/agents/{id}/scheduled_tasks",
      operationId: "createScheduledTask",
      summary: "Schedule a task: each firing (cron in a time zone, or one-shot) starts a fresh session",
      tag: "scheduled tasks",
      access: "member",
      body: "CreateScheduledTaskRequest",
      response: { status: 200, body: "ScheduledTask", description: "The task, with its next run" },
      handler: async ({ principal, params, body }) => {
        const now = clock.now();
        const spec = parseSchedule(body, now);
        const { agent, archived } = await findAgent(db, principal.tenantId, params.id);
        if (archived) {
          throw new WakeloopError(
            "agent_archived",
            `agent ${agent.id} is archived; it runs no scheduled tasks`,
            {
              details: { id: agent.id },
            },
          );
        }
        const row = await createScheduledTask(db, {
          tenantId: principal.tenantId,
          agentId: agent.id,
          createdBySessionId: null,
          name: body.name,
          prompt: body.task,
          spec,
          maxTotalTokens: body.token_limit ?? null,
          model: chosenModel(agent.model, body.model),
          now,
          maxPerAgent: config.quotas.scheduledTasksPerAgent,
        });
        return scheduledTaskView(row);
      },
    }),
    defineRoute({
      method: "GET",
      path: "/v1/agents/{id}/scheduled_tasks",
      operationId: "listScheduledTasks",
      summary: "List an agent's scheduled tasks, oldest first (paused ones with include_disabled=true)",
      tag: "scheduled tasks",
      access: "member",
      query: ListScheduledTasksQuery,
      response: { status: 200, body: "ScheduledTaskList", description: "The agent's tasks" },
      handler: async ({ principal, params, query }) => {
        await findAgent(db, principal.tenantId, params.id);
        const rows = await listScheduledTasks(
          db,
          { tenantId: principal.tenantId, agentId: params.id },
          { includeDisabled: query.include_disabled, limit: 1_000 },
        );
        return { tasks: rows.map(scheduledTaskView) };
      },
    }),
    defineRoute({
      method: "GET",
      path: TASK_PATH,
      operationId: "getScheduledTask",
      summary: "Get a scheduled task with its next and last run",
      tag: "scheduled tasks",
      access: "member",
      response: { status: 200, body: "ScheduledTask", description: "The task" },
      handler: async ({ principal, params }) =>
        found(
          await getScheduledTask(db, { tenantId: principal.tenantId, agentId: params.id }, params.task_id),
          params.task_id,
        ),
    }),
    toggle(true),
    toggle(false),
    defineRoute({
      method: "DELETE",
      path: TASK_PATH,
      operationId: "cancelScheduledTask",
      summary: "Cancel (delete) a scheduled task; the sessions it started stay",
      tag: "scheduled tasks",
      access: "member",
      response: { status: 200, body: "DeletedScheduledTask", description: "Whether a task was deleted" },
      handler: async ({ principal, params }) => {
        const deleted = await cancelScheduledTask(
          db,
          { tenantId: principal.tenantId, agentId: params.id },
          params.task_id,
        );
        if (!deleted) throw notFound("scheduled task", params.task_id);
        return { id: params.task_id, deleted };
      },
    }),
  ];
}
