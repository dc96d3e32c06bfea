import { type Content, SessionRunChildInput, type SessionState, textContent } from "@wakeloop/contracts";
import {
  type ChildRunStatus,
  childEnding,
  childRunStatus,
  nextOutcomeStep,
  outcomeTrend,
  promotionReady,
  wakeReason,
} from "@wakeloop/session-core";
import { type Kysely, sql, type Transaction } from "kysely";
import { z } from "zod";
import type { Database } from "./database";
import { append, type NewEvent } from "./event-store";
import { readJson, readSessionState } from "./json-readers";
import { activeOutcome, outcomeEvaluations } from "./outcomes";
import { childResult } from "./sub-sessions";
import { withTenant } from "./tenant-scope";

/*
 * `session_run_child` (openboa, issue #11): a parent advances a direct sub-session for a few bounded
 * model requests ("cycles") and waits for it. The call pauses the parent like `wait_for_sessions` (an
 * `agent.custom_tool_use`, recorded before anything happens: invariant 4); the orchestrator then starts
 * the run (`startChildRuns`: the message into the sub-session and the run on its row) and answers the
 * call once the run is over (`finishChildRun`). Both take the parent's then the sub-session's row lock,
 * as the completion does, so repeated deliveries and any number of replicas start and answer each run
 * once.
 */

/** An open run, on the sub-session's row (migration 0027). */
const ChildRun = z.object({
  /** The parent's `session_run_child` call waiting for it. */
  call_id: z.string(),
  max_cycles: z.number().int().positive(),
  /** The sub-session's last seq when the run began: model requests after it count. */
  from_seq: z.number().int().nonnegative(),
});
type ChildRun = z.infer<typeof ChildRun>;

const readRun = (value: unknown): ChildRun | null =>
  value === null ? null : readJson(ChildRun, value, "child run");

/** What an idle sub-session with nothing to do is told when the parent runs it without a message. */
export const CONTINUE_MESSAGE = "Continue with your task.";

interface Target {
  tenantId: string;
  sessionId: string;
}

/**
 * Starts the runs the session's pending `session_run_child` calls ask for, once each: the sub-session
 * gets the call's message (or, idle with nothing to do, `CONTINUE_MESSAGE`), which wakes it, and its row
 * the run. A call naming a session that is not a direct sub-session, one that has finished or one
 * another pending call is running is answered at once with an error, and one naming a sub-session that
 * waits on a person with its summary; nothing is written to that session. Returns how many calls were
 * answered at once.
 */
export function startChildRuns(db: Kysely<Database>, target: Target): Promise<number> {
  const { tenantId, sessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    const parent = await lockSession(trx, tenantId, sessionId);
    if (parent === undefined) return 0;
    const pending = new Set(parent.state.pending_actions.map((action) => action.event_id));
    const answers: NewEvent[] = [];
    for (const action of parent.state.pending_actions) {
      if (action.name !== "session_run_child") continue;
      const now = await startRun(trx, target, action.event_id, action.input, pending);
      if (now !== null) answers.push(answer(action.event_id, now.content, now.isError));
    }
    await append(trx, {
      tenantId,
      sessionId,
      events: answers,
      head: { lastSeq: parent.lastSeq, state: parent.state },
    });
    return answers.length;
  });
}

/**
 * Starts one run; null when it started (or had). A call that cannot start is answered at once: with
 * an error the model can act on, or, for a sub-session that waits on a person (no run can advance it
 * before the answer), with its summary, `requires_action`.
 */
async function startRun(
  trx: Transaction<Database>,
  parent: Target,
  callId: string,
  input: unknown,
  pending: ReadonlySet<string>,
): Promise<{ content: Content; isError: boolean } | null> {
  const refuse = (message: string) => ({ content: textContent(message), isError: true });
  const parsed = SessionRunChildInput.safeParse(input);
  if (!parsed.success) return refuse(`invalid session_run_child input: ${parsed.error.message}`);
  const { session_id: childId, message, max_cycles } = parsed.data;
  const child = await lockSession(trx, parent.tenantId, childId);
  if (child === undefined || child.parentSessionId !== parent.sessionId) {
    return refuse(`${childId} is not a sub-session of this session`);
  }
  const run = child.run;
  if (run?.call_id === callId) return null;
  const ended = childEnding(child.state);
  if (child.reported || ended !== null) {
    return refuse(`sub-session ${childId} has finished (${ended ?? "reported"}); spawn another one instead`);
  }
  // A run whose call is no longer pending (interrupted, answered by a person) is over for its parent.
  if (run !== null && pending.has(run.call_id)) {
    return refuse(`sub-session ${childId} is already being run by call ${run.call_id}; wait for that one`);
  }
  const opened: ChildRun = { call_id: callId, max_cycles, from_seq: child.lastSeq };
  const childTarget = { tenantId: parent.tenantId, sessionId: childId };
  if (child.state.status === "idle" && child.state.pending_actions.length > 0) {
    const summary = await runSummary(trx, childTarget, child.state, {
      status: "requires_action",
      used: 0,
      run: opened,
    });
    return { content: textContent(JSON.stringify(summary)), isError: false };
  }
  const atRest = child.state.status === "idle" && wakeReason(child.state) === null;
  const text = message ?? (atRest ? CONTINUE_MESSAGE : null);
  await trx
    .updateTable("sessions")
    .set({ child_run: JSON.stringify(opened) })
    .where("tenant_id", "=", parent.tenantId)
    .where("id", "=", childId)
    .execute();
  if (text !== null) {
    await append(trx, {
      tenantId: parent.tenantId,
      sessionId: childId,
      events: [{ type: "user.message", content: textContent(text) }],
      head: { lastSeq: child.lastSeq, state: child.state },
    });
  }
  return null;
}

/**
 * Ends the sub-session's open run if it is over (`childRunStatus`): clears it and answers the parent's
 * call with the sub-session's summary. A run whose call is no longer pending (an interrupt, or a person
 * answered it) is over for the parent: it is cleared unanswered (`abandoned`). Returns how the run
 * ended, null when there was none or it goes on.
 */
export function finishChildRun(
  db: Kysely<Database>,
  target: Target,
): Promise<ChildRunStatus | "abandoned" | null> {
  const { tenantId, sessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    const link = await trx
      .selectFrom("sessions")
      .select(["parent_session_id", "child_run"])
      .where("tenant_id", "=", tenantId)
      .where("id", "=", sessionId)
      .executeTakeFirst();
    if (link?.parent_session_id == null || link.child_run === null) return null;
    const parent = await lockSession(trx, tenantId, link.parent_session_id);
    const child = await lockSession(trx, tenantId, sessionId);
    if (parent === undefined || child?.run == null) return null;
    const { run } = child;
    const clear = () =>
      trx
        .updateTable("sessions")
        .set({ child_run: null })
        .where("tenant_id", "=", tenantId)
        .where("id", "=", sessionId)
        .execute();
    if (!parent.state.pending_actions.some((action) => action.event_id === run.call_id)) {
      await clear();
      return "abandoned";
    }
    const progress = await runProgress(trx, target, run);
    const status = childRunStatus(child.state, progress);
    if (status === null) return null;
    await clear();
    const summary = await runSummary(trx, target, child.state, { status, used: progress.used, run });
    await append(trx, {
      tenantId,
      sessionId: parent.id,
      events: [answer(run.call_id, textContent(JSON.stringify(summary)), false)],
      head: { lastSeq: parent.lastSeq, state: parent.state },
    });
    return status;
  });
}

/**
 * Model requests the sub-session's open run still allows; null when it is in no run. The harness reads
 * it at each step, so a run that begins while the sub-session is mid-wake bounds it from its next
 * request.
 */
export function childRunLeft(db: Kysely<Database>, target: Target): Promise<number | null> {
  return withTenant(db, target.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("sessions")
      .select("child_run")
      .where("tenant_id", "=", target.tenantId)
      .where("id", "=", target.sessionId)
      .executeTakeFirst();
    const run = readRun(row?.child_run ?? null);
    if (run === null) return null;
    return run.max_cycles - (await runProgress(trx, target, run)).used;
  });
}

/** Model requests since the run began, and whether the last one's calls still wait for the model. */
async function runProgress(trx: Transaction<Database>, target: Target, run: ChildRun) {
  const { rows } = await sql<{ used: number; last_start: number | null; last_call: number | null }>`
    SELECT count(*) FILTER (WHERE type = 'span.model_request_start')::int AS used,
      max(seq) FILTER (WHERE type = 'span.model_request_start') AS last_start,
      max(seq) FILTER (WHERE type IN ('agent.tool_use', 'agent.mcp_tool_use', 'agent.custom_tool_use'))
        AS last_call
    FROM session_events
    WHERE tenant_id = ${target.tenantId} AND session_id = ${target.sessionId} AND seq > ${run.from_seq}`.execute(
    trx,
  );
  const { used = 0, last_start = null, last_call = null } = rows[0] ?? {};
  const cutOff = last_call !== null && last_start !== null && last_call > last_start;
  return { used, max: run.max_cycles, cutOff };
}

/**
 * The sub-session as the parent reads it after the run (openboa's delegated child summary): how the run
 * ended, its last result, what it waits on, and its evaluator posture, lifted to the top level.
 */
async function runSummary(
  trx: Transaction<Database>,
  target: Target,
  state: SessionState,
  run: { status: ChildRunStatus; used: number; run: ChildRun },
) {
  const outcome = await activeOutcome(trx, target);
  // The trend and the promotion gate read the latest two attempts.
  const attempts = outcome === null ? [] : await outcomeEvaluations(trx, target, outcome.id, 2);
  const ready = promotionReady(attempts);
  const waiting = state.pending_actions[0];
  return {
    session_id: target.sessionId,
    relation_to_current: "child",
    status: run.status,
    cycles_used: run.used,
    max_cycles: run.run.max_cycles,
    result: await childResult(trx, target.tenantId, target.sessionId),
    title: state.title,
    child_count: state.child_session_ids.length,
    requires_action:
      waiting === undefined
        ? null
        : {
            pending_action_kind: waiting.kind,
            pending_action_tool_name: waiting.name,
            event_ids: state.pending_actions.map((action) => action.event_id),
          },
    outcome_status: outcome === null ? "no_outcome" : ready ? "promotion_ready" : "not_ready",
    outcome_trend: outcomeTrend(attempts),
    promotion_ready: ready,
    next_outcome_step: outcome === null ? null : nextOutcomeStep(attempts),
  };
}

function answer(callId: string, content: Content, isError: boolean): NewEvent {
  return { type: "user.custom_tool_result", custom_tool_use_id: callId, content, is_error: isError };
}

/** A session's row under lock, with its projection and open run read through their schemas. */
async function lockSession(trx: Transaction<Database>, tenantId: string, sessionId: string) {
  const row = await trx
    .selectFrom("sessions")
    .select(["id", "parent_session_id", "state", "last_seq", "child_outcome", "child_run"])
    .where("tenant_id", "=", tenantId)
    .where("id", "=", sessionId)
    .forUpdate()
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    parentSessionId: row.parent_session_id,
    state: readSessionState(row.state),
    lastSeq: row.last_seq,
    reported: row.child_outcome !== null,
    run: readRun(row.child_run),
  };
}
