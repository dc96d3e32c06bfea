import { decideFiring } from "@wakeloop/session-core";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database, FiringOutcome } from "./database";
import { append } from "./event-store";
import { type ScheduleRow, scheduleSpecOf } from "./schedules";
import { createSessions } from "./session-queries";
import { withTenant } from "./tenant-scope";

/*
 * Firing due schedules, in any number of orchestrator replicas at once. A batch is one transaction
 * scoped to one tenant: it locks due rows with FOR UPDATE SKIP LOCKED (a replica takes only rows no
 * other holds, and a row it takes is still due, since the lock waits for a firing that moved it on),
 * applies each occurrence's effect, records the occurrence in `schedule_firings` (whose primary key
 * refuses a second record of it) and moves `next_run_at` on, all or nothing. A replica killed
 * mid-batch rolls back, so the rows are due again for the next one: each occurrence fires once.
 */

export interface Firing {
  scheduleId: string;
  kind: ScheduleRow["kind"];
  occurrenceAt: Date;
  outcome: FiringOutcome;
  /** The session the message went into (the reminder's, or the task's fresh one). */
  sessionId: string | null;
}

/** Tenants with a schedule due by `now` (tenant-blind, through a definer function). */
export async function tenantsWithDueSchedules(
  db: Kysely<Database>,
  now: Date,
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{
    tenant_id: string;
  }>`SELECT tenant_id FROM wl_tenants_with_due_schedules(${now}::timestamptz, ${limit}::integer)`.execute(db);
  return rows.map((row) => row.tenant_id);
}

export interface FireDueInput {
  tenantId: string;
  now: Date;
  /** Rows locked and fired in one transaction. */
  limit: number;
  /** Cron occurrences older than this when seen are skipped (the catch-up policy, `decideFiring`). */
  catchUpWindowMs: number;
}

interface TaskAgent {
  id: string;
  latest_version: number;
  archived: boolean;
  max_total_tokens: number | null;
}

/** Fires up to `limit` of the tenant's due schedules; returns what each occurrence came to. */
export function fireDueSchedules(db: Kysely<Database>, input: FireDueInput): Promise<Firing[]> {
  const { tenantId, now } = input;
  return withTenant(db, tenantId, async (trx) => {
    const due = await trx
      .selectFrom("schedules")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .where("enabled", "=", true)
      .where("next_run_at", "<=", now)
      .orderBy("next_run_at")
      .limit(input.limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return [];
    const agents = await taskAgents(trx, tenantId, due);
    const ended = await endedSessions(trx, tenantId, due);
    const firings: Firing[] = [];
    const starts: { firing: Firing; row: ScheduleRow; agent: TaskAgent }[] = [];
    for (const row of due) {
      const occurrenceAt = row.next_run_at ?? now;
      const decision = decideFiring(scheduleSpecOf(row), occurrenceAt, now, input.catchUpWindowMs);
      const firing: Firing = {
        scheduleId: row.id,
        kind: row.kind,
        occurrenceAt,
        outcome: decision.fire ? "fired" : "skipped",
        sessionId: row.kind === "reminder" ? row.session_id : null,
      };
      firings.push(firing);
      row.next_run_at = decision.nextRunAt;
      if (!decision.fire) continue;
      const agent = agents.get(row.agent_id);
      if (row.kind === "reminder" && ended.has(row.session_id ?? "")) firing.outcome = "session_ended";
      else if (row.kind === "task" && (agent === undefined || agent.archived))
        firing.outcome = "agent_archived";
      else if (row.kind === "task" && agent !== undefined) starts.push({ firing, row, agent });
      if (firing.outcome === "fired") row.last_run_at = now;
    }
    await remind(trx, due, firings, now);
    await startTaskSessions(trx, tenantId, starts, now);
    await trx
      .insertInto("schedule_firings")
      .values(
        firings.map((firing) => ({
          tenant_id: tenantId,
          schedule_id: firing.scheduleId,
          occurrence_at: firing.occurrenceAt,
          outcome: firing.outcome,
          session_id: firing.sessionId,
          fired_at: now,
        })),
      )
      .execute();
    const moves = due.map((row) => ({
      id: row.id,
      next_run_at: row.next_run_at,
      last_run_at: row.last_run_at,
    }));
    await sql`UPDATE schedules s SET next_run_at = m.next_run_at, last_run_at = m.last_run_at
      FROM jsonb_to_recordset(${JSON.stringify(moves)}::jsonb)
        AS m(id text, next_run_at timestamptz, last_run_at timestamptz)
      WHERE s.tenant_id = ${tenantId} AND s.id = m.id`.execute(trx);
    return firings;
  });
}

/** Each fired reminder's message, appended to its session. */
async function remind(
  trx: Transaction<Database>,
  due: readonly ScheduleRow[],
  firings: readonly Firing[],
  now: Date,
): Promise<void> {
  for (const [index, firing] of firings.entries()) {
    const row = due[index];
    if (row === undefined || firing.kind !== "reminder" || firing.outcome !== "fired") continue;
    const text = `Reminder (set for ${firing.occurrenceAt.toISOString()}): ${row.prompt}`;
    await append(trx, {
      tenantId: row.tenant_id,
      sessionId: firing.sessionId ?? "",
      events: [{ type: "user.message", content: [{ type: "text", text }] }],
      now,
    });
  }
}

/** Fresh sessions for the fired tasks (one insert for the batch), each given its prompt. */
async function startTaskSessions(
  trx: Transaction<Database>,
  tenantId: string,
  starts: readonly { firing: Firing; row: ScheduleRow; agent: TaskAgent }[],
  now: Date,
): Promise<void> {
  const sessions = await createSessions(
    trx,
    tenantId,
    starts.map(({ firing, row, agent }) => ({
      agentId: agent.id,
      agentVersion: agent.latest_version,
      environmentId: null,
      parentSessionId: null,
      title: row.name,
      metadata: { scheduled_task_id: row.id, scheduled_for: firing.occurrenceAt.toISOString() },
      // The task's limit can only lower the agent's budget: a tool call cannot raise its own spending.
      budget: { max_total_tokens: lowerLimit(row.max_total_tokens, agent.max_total_tokens) },
      model: row.model,
      now,
    })),
  );
  for (const [index, session] of sessions.entries()) {
    const start = starts[index];
    if (start === undefined) continue;
    start.firing.sessionId = session.id;
    await append(trx, {
      tenantId,
      sessionId: session.id,
      events: [{ type: "user.message", content: [{ type: "text", text: start.row.prompt }] }],
      head: { lastSeq: session.last_seq, state: session.state },
      now,
    });
  }
}

/** The smaller of two token limits, null meaning none. */
function lowerLimit(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

async function taskAgents(
  trx: Transaction<Database>,
  tenantId: string,
  due: readonly ScheduleRow[],
): Promise<Map<string, TaskAgent>> {
  const ids = [...new Set(due.filter((row) => row.kind === "task").map((row) => row.agent_id))];
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom("agents as a")
    .innerJoin("agent_versions as v", (join) =>
      join
        .onRef("v.tenant_id", "=", "a.tenant_id")
        .onRef("v.agent_id", "=", "a.id")
        .onRef("v.version", "=", "a.latest_version"),
    )
    .select([
      "a.id",
      "a.latest_version",
      "a.archived_at",
      sql<string | null>`v.spec->'budget'->>'max_total_tokens'`.as("max_total_tokens"),
    ])
    .where("a.tenant_id", "=", tenantId)
    .where("a.id", "in", ids)
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        latest_version: row.latest_version,
        archived: row.archived_at !== null,
        max_total_tokens: row.max_total_tokens === null ? null : Number(row.max_total_tokens),
      },
    ]),
  );
}

/** The reminders' sessions that are terminated: a message into them would reach no one. */
async function endedSessions(
  trx: Transaction<Database>,
  tenantId: string,
  due: readonly ScheduleRow[],
): Promise<Set<string>> {
  const ids = [
    ...new Set(due.flatMap((row) => (row.kind === "reminder" && row.session_id ? [row.session_id] : []))),
  ];
  if (ids.length === 0) return new Set();
  const rows = await trx
    .selectFrom("sessions")
    .select("id")
    .where("tenant_id", "=", tenantId)
    .where("id", "in", ids)
    .where("status", "=", "terminated")
    .execute();
  return new Set(rows.map((row) => row.id));
}
