import { type ScheduledTask, WakeloopError } from "@wakeloop/contracts";
import { nextOccurrence, type ScheduleSpec } from "@wakeloop/session-core";
import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import type { Database, SchedulesTable } from "./database";
import { newId } from "./ids";
import { withTenant } from "./tenant-scope";

/*
 * Reminders and scheduled tasks as rows (migration 0013). Writes made by tools join the caller's
 * transaction, so a tool's effect commits with its call and result. Firing is in schedule-firing.ts.
 */

export type ScheduleRow = Selectable<SchedulesTable>;

export interface AgentScheduleScope {
  tenantId: string;
  agentId: string;
}

/** The spec a row was stored with (the table's checks keep exactly one of `at` / `cron`). */
export function scheduleSpecOf(row: Pick<ScheduleRow, "at" | "cron" | "timezone">): ScheduleSpec {
  if (row.at !== null) return { kind: "once", at: row.at };
  return { kind: "cron", cron: row.cron ?? "", timezone: row.timezone ?? "UTC" };
}

/** A task row as the API and the tools show it. */
export function scheduledTaskView(row: ScheduleRow): ScheduledTask {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name ?? "",
    task: row.prompt,
    type: row.cron === null ? "once" : "cron",
    cron: row.cron,
    timezone: row.timezone,
    at: row.at?.toISOString() ?? null,
    token_limit: row.max_total_tokens,
    model: row.model,
    enabled: row.enabled,
    next_run: row.next_run_at?.toISOString() ?? null,
    last_run: row.last_run_at?.toISOString() ?? null,
    created_by_session_id: row.session_id,
    created_at: row.created_at.toISOString(),
  };
}

function specColumns(spec: ScheduleSpec) {
  return spec.kind === "once"
    ? { at: spec.at, cron: null, timezone: null }
    : { at: null, cron: spec.cron, timezone: spec.timezone };
}

export interface NewReminder {
  tenantId: string;
  agentId: string;
  sessionId: string;
  message: string;
  at: Date;
  /** Reminders not fired yet one session may have. */
  maxPending: number;
}

/**
 * A one-shot message into `sessionId` at `at` (already checked to be in the future). Refused with
 * `reminder_limit` when the session already has `maxPending` reminders that have not fired.
 */
export function createReminder(db: Kysely<Database>, input: NewReminder): Promise<ScheduleRow> {
  return withTenant(db, input.tenantId, async (trx) => {
    await requireRoom(trx, {
      tenantId: input.tenantId,
      kind: "reminder",
      owner: { column: "session_id", id: input.sessionId },
      limit: input.maxPending,
      refusal: (count) =>
        new WakeloopError(
          "reminder_limit",
          `this session already has ${count} reminders waiting, the limit; cancel one before setting another`,
          { details: { limit: input.maxPending } },
        ),
    });
    return trx
      .insertInto("schedules")
      .values({
        id: newId("reminder"),
        tenant_id: input.tenantId,
        agent_id: input.agentId,
        kind: "reminder",
        session_id: input.sessionId,
        prompt: input.message,
        at: input.at,
        next_run_at: input.at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/**
 * Throws `refusal(count)` when the owner (an agent's tasks, a session's reminders) already has `limit`
 * unfinished schedules of `kind`. The count holds an advisory lock on the owner until the caller's
 * transaction ends, so concurrent creations cannot pass the limit together.
 */
async function requireRoom(
  trx: Transaction<Database>,
  check: {
    tenantId: string;
    kind: ScheduleRow["kind"];
    owner: { column: "agent_id" | "session_id"; id: string };
    limit: number;
    refusal: (count: number) => WakeloopError;
  },
): Promise<void> {
  const { tenantId, kind, owner } = check;
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`schedules:${tenantId}:${owner.id}`}, 0))`.execute(
    trx,
  );
  const { count } = await trx
    .selectFrom("schedules")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("tenant_id", "=", tenantId)
    .where(owner.column, "=", owner.id)
    .where("kind", "=", kind)
    .where("next_run_at", "is not", null)
    .executeTakeFirstOrThrow();
  if (Number(count) >= check.limit) throw check.refusal(Number(count));
}

/** Deletes a reminder of `sessionId` that has not fired yet; false when there is none. */
export function cancelReminder(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string; id: string },
): Promise<boolean> {
  return withTenant(db, target.tenantId, async (trx) => {
    const deleted = await trx
      .deleteFrom("schedules")
      .where("tenant_id", "=", target.tenantId)
      .where("kind", "=", "reminder")
      .where("session_id", "=", target.sessionId)
      .where("id", "=", target.id)
      .where("next_run_at", "is not", null)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  });
}

export interface NewScheduledTask extends AgentScheduleScope {
  /** The session whose tool call created it; null when a person created it through the API. */
  createdBySessionId: string | null;
  name: string;
  prompt: string;
  spec: ScheduleSpec;
  maxTotalTokens: number | null;
  /** The model each firing's session runs (checked by `chosenModel`); null for the agent's. */
  model?: string | null;
  now: Date;
  /** Tasks not finished yet (enabled or not) one agent may have. */
  maxPerAgent: number;
}

/**
 * Stores a task due at its first occurrence after `now`. Refused with `scheduled_task_limit` when the
 * agent already has `maxPerAgent` unfinished tasks (`requireRoom`).
 */
export function createScheduledTask(db: Kysely<Database>, input: NewScheduledTask): Promise<ScheduleRow> {
  const nextRunAt = nextOccurrence(input.spec, input.now);
  if (nextRunAt === null) {
    throw new WakeloopError("invalid_request", "the schedule has no occurrence after now", {
      details: { spec: input.spec },
    });
  }
  return withTenant(db, input.tenantId, async (trx) => {
    await requireRoom(trx, {
      tenantId: input.tenantId,
      kind: "task",
      owner: { column: "agent_id", id: input.agentId },
      limit: input.maxPerAgent,
      refusal: (count) =>
        new WakeloopError(
          "scheduled_task_limit",
          `agent ${input.agentId} already has ${count} scheduled tasks, the limit; cancel one before creating another`,
          { details: { limit: input.maxPerAgent } },
        ),
    });
    return trx
      .insertInto("schedules")
      .values({
        id: newId("scheduledTask"),
        tenant_id: input.tenantId,
        agent_id: input.agentId,
        kind: "task",
        session_id: input.createdBySessionId,
        name: input.name,
        prompt: input.prompt,
        ...specColumns(input.spec),
        max_total_tokens: input.maxTotalTokens,
        model: input.model ?? null,
        next_run_at: nextRunAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** The agent's tasks, oldest first; disabled ones only when asked. Bounded by `limit`. */
export function listScheduledTasks(
  db: Kysely<Database>,
  scope: AgentScheduleScope,
  options: { includeDisabled: boolean; limit: number },
): Promise<ScheduleRow[]> {
  return withTenant(db, scope.tenantId, (trx) => {
    let query = agentTasks(trx, scope).orderBy("created_at").orderBy("id").limit(options.limit);
    if (!options.includeDisabled) query = query.where("enabled", "=", true);
    return query.execute();
  });
}

/** The agent's scheduled tasks (not its reminders), in the scope's tenant. */
function agentTasks(trx: Transaction<Database>, scope: AgentScheduleScope) {
  return trx
    .selectFrom("schedules")
    .selectAll()
    .where("tenant_id", "=", scope.tenantId)
    .where("agent_id", "=", scope.agentId)
    .where("kind", "=", "task");
}

export function getScheduledTask(
  db: Kysely<Database>,
  scope: AgentScheduleScope,
  id: string,
): Promise<ScheduleRow | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await agentTasks(trx, scope).where("id", "=", id).executeTakeFirst();
    return row ?? null;
  });
}

/**
 * Pauses or resumes a task; null when the agent has no such task. Occurrences that come due while a
 * task is disabled are not fired: enabling a cron task makes it due at its next occurrence after
 * `now`. A one-shot task keeps its time and, if that passed while disabled, fires at once.
 */
export function setScheduledTaskEnabled(
  db: Kysely<Database>,
  scope: AgentScheduleScope,
  id: string,
  enabled: boolean,
  now: Date,
): Promise<ScheduleRow | null> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await agentTasks(trx, scope).where("id", "=", id).forUpdate().executeTakeFirst();
    if (row === undefined) return null;
    if (row.enabled === enabled) return row;
    const spec = scheduleSpecOf(row);
    const nextRunAt =
      enabled && spec.kind === "cron" && row.next_run_at !== null
        ? nextOccurrence(spec, now)
        : row.next_run_at;
    return trx
      .updateTable("schedules")
      .set({ enabled, next_run_at: nextRunAt })
      .where("tenant_id", "=", scope.tenantId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** Deletes a task (its firings and the sessions they started stay); false when there is none. */
export function cancelScheduledTask(
  db: Kysely<Database>,
  scope: AgentScheduleScope,
  id: string,
): Promise<boolean> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const deleted = await trx
      .deleteFrom("schedules")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("kind", "=", "task")
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  });
}
