import {
  type Budget,
  type ChildSessionStatus,
  type Content,
  type Metadata,
  type ModelConfig,
  type SessionEvent,
  type SessionState,
  WaitForSessionsInput,
  WakeloopError,
} from "@wakeloop/contracts";
import { chargedTokens, childEnding } from "@wakeloop/session-core";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "./database";
import type { SessionRow } from "./event-rows";
import { append, type NewEvent, type TraceHeaders } from "./event-store";
import { readSessionState } from "./json-readers";
import { createSession } from "./session-queries";
import { withTenant } from "./tenant-scope";

/*
 * Sub-sessions (issue #11). A child is a real session with `parent_session_id` and `depth`; its parent
 * hears of its end through one `session.child_completed` event, and a parent paused on
 * `wait_for_sessions` gets its answer once every child it waits for has finished. Both happen under row
 * locks (parent, then child), so any number of orchestrator replicas and repeated deliveries write each
 * of them once.
 */

/** What a child's terms are decided from, read under the parent's row lock. */
export interface ChildFacts {
  agentLimit: number | null;
  agentModel: Pick<ModelConfig, "provider" | "id">;
  delegatedTokens: number;
}

export interface SpawnChildInput {
  tenantId: string;
  parent: { sessionId: string; agentId: string; environmentId: string | null; depth: number };
  /** Another agent of the tenant; the parent's when absent. */
  agentId?: string | undefined;
  task: string;
  title: string | null;
  metadata: Metadata;
  /**
   * The child's budget (`carveChildBudget`) and model (`chosenModel`, null for its agent's) from the
   * child agent's own limit and model and the tokens the parent has given sub-sessions so far, counting
   * siblings spawned earlier in this same, uncommitted step. Throws to refuse the spawn.
   */
  terms: (facts: ChildFacts) => { budget: Budget; model: string | null };
  maxChildren: number;
  traceHeaders?: TraceHeaders | undefined;
  now?: Date;
}

/**
 * Creates the child session and gives it its task (its first `user.message`, which makes the
 * orchestrator wake it). Refuses, writing nothing, past the children limit or for an agent the tenant
 * does not have. `db` should be the transaction the spawning call's result commits in.
 */
export function spawnChildSession(db: Kysely<Database>, input: SpawnChildInput): Promise<SessionRow> {
  const { tenantId, parent } = input;
  return withTenant(db, tenantId, async (trx) => {
    // The parent row lock orders concurrent spawns of one parent, so the count below cannot race.
    const parentRow = await trx
      .selectFrom("sessions")
      .select("state")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", parent.sessionId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const parentState = readSessionState(parentRow.state);
    const siblings = await trx
      .selectFrom("sessions")
      .select(["id", sql<string | null>`state->'budget'->>'max_total_tokens'`.as("max_total_tokens")])
      .where("tenant_id", "=", tenantId)
      .where("parent_session_id", "=", parent.sessionId)
      .execute();
    const count = siblings.length;
    // Siblings the parent's projection does not list yet were spawned earlier in this step: their
    // budgets are held too, though their `session.child_created` commits with the step.
    const known = new Set(parentState.child_session_ids);
    const unrecorded = siblings
      .filter((sibling) => !known.has(sibling.id))
      .reduce((sum, sibling) => sum + Number(sibling.max_total_tokens ?? 0), 0);
    if (count >= input.maxChildren) {
      throw new WakeloopError(
        "sub_session_limit",
        `this session already has ${count} sub-sessions, the maximum of ${input.maxChildren}`,
      );
    }
    const agentId = input.agentId ?? parent.agentId;
    const agent = await trx
      .selectFrom("agents as a")
      .innerJoin("agent_versions as v", (join) =>
        join
          .onRef("v.tenant_id", "=", "a.tenant_id")
          .onRef("v.agent_id", "=", "a.id")
          .onRef("v.version", "=", "a.latest_version"),
      )
      .select([
        "a.latest_version",
        "a.archived_at",
        sql<string | null>`v.spec->'budget'->>'max_total_tokens'`.as("max_total_tokens"),
        sql<ModelConfig["provider"]>`v.spec->'model'->>'provider'`.as("provider"),
        sql<string>`v.spec->'model'->>'id'`.as("model_id"),
      ])
      .where("a.tenant_id", "=", tenantId)
      .where("a.id", "=", agentId)
      .executeTakeFirst();
    if (agent === undefined || agent.archived_at !== null) {
      throw new WakeloopError("invalid_request", `no agent ${agentId} to run a sub-session in this tenant`);
    }
    const terms = input.terms({
      agentLimit: agent.max_total_tokens === null ? null : Number(agent.max_total_tokens),
      agentModel: { provider: agent.provider, id: agent.model_id },
      delegatedTokens: parentState.delegated_tokens + unrecorded,
    });
    const child = await createSession(trx, {
      tenantId,
      agentId,
      agentVersion: agent.latest_version,
      // The parent's environment when the child runs the same agent; another agent starts without one.
      environmentId: agentId === parent.agentId ? parent.environmentId : null,
      parentSessionId: parent.sessionId,
      depth: parent.depth + 1,
      title: input.title,
      metadata: input.metadata,
      budget: terms.budget,
      model: terms.model,
      ...(input.now && { now: input.now }),
    });
    await append(trx, {
      tenantId,
      sessionId: child.id,
      events: [{ type: "user.message", content: [{ type: "text", text: input.task }] }],
      head: { lastSeq: child.last_seq, state: child.state },
      ...(input.traceHeaders && { traceHeaders: input.traceHeaders }),
      ...(input.now && { now: input.now }),
    });
    return child;
  });
}

export interface ChildOutcome {
  status: ChildSessionStatus;
  result: string | null;
}

/**
 * Tells the parent that this sub-session finished, if it did and the parent was not told yet: records
 * the outcome on the child and appends `session.child_completed` to the parent, then answers the
 * parent's waits this completes. Returns the outcome it recorded and the parent it told (whose budget
 * the charge-back may have freed), null when there was nothing to do.
 */
export function completeChildSession(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string },
): Promise<(ChildOutcome & { parentSessionId: string }) | null> {
  const { tenantId, sessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    // Locks go parent first, then child, as the gateway's answers routed to a child take them.
    const link = await trx
      .selectFrom("sessions")
      .select("parent_session_id")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", sessionId)
      .executeTakeFirst();
    if (link?.parent_session_id == null) return null;
    await trx
      .selectFrom("sessions")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", link.parent_session_id)
      .forUpdate()
      .execute();
    const child = await trx
      .selectFrom("sessions")
      .select(["parent_session_id", "state", "child_outcome"])
      .where("tenant_id", "=", tenantId)
      .where("id", "=", sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (child === undefined || child.parent_session_id === null || child.child_outcome !== null) return null;
    const childState = readSessionState(child.state);
    const status = childEnding(childState);
    if (status === null) return null;
    const outcome: ChildOutcome = { status, result: await childResult(trx, tenantId, sessionId) };
    // The parent is charged what the child spent in place of the budget it held for it.
    const held = await trx
      .selectFrom("session_events")
      .select(sql<string | null>`body->>'token_budget'`.as("token_budget"))
      .where("tenant_id", "=", tenantId)
      .where("session_id", "=", child.parent_session_id)
      .where("type", "=", "session.child_created")
      .where(sql`body->>'child_session_id'`, "=", sessionId)
      .executeTakeFirst();
    await trx
      .updateTable("sessions")
      .set({ child_outcome: JSON.stringify(outcome) })
      .where("tenant_id", "=", tenantId)
      .where("id", "=", sessionId)
      .execute();
    await append(trx, {
      tenantId,
      sessionId: child.parent_session_id,
      events: [
        {
          type: "session.child_completed",
          child_session_id: sessionId,
          ...outcome,
          tokens_used: chargedTokens(childState),
          token_budget: Number(held?.token_budget ?? 0),
        },
      ],
    });
    await answerWaits(trx, { tenantId, sessionId: child.parent_session_id });
    return { ...outcome, parentSessionId: child.parent_session_id };
  });
}

/** What the child reported (`report_result`), else its last message, best effort. */
export async function childResult(
  trx: Transaction<Database>,
  tenantId: string,
  sessionId: string,
): Promise<string | null> {
  const row = await trx
    .selectFrom("session_events")
    .select(["type", "body"])
    .where("tenant_id", "=", tenantId)
    .where("session_id", "=", sessionId)
    .where((eb) =>
      eb.or([
        eb("type", "=", "agent.message"),
        eb.and([
          eb("type", "=", "agent.tool_use"),
          eb(sql`body->>'name'`, "=", "report_result"),
          eb(sql`body->>'evaluated_permission'`, "=", "allow"),
        ]),
      ]),
    )
    .orderBy(sql`(type = 'agent.tool_use')`, "desc")
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return null;
  const body = row.body as { input?: { result?: unknown }; content?: Content };
  if (row.type === "agent.tool_use") return typeof body.input?.result === "string" ? body.input.result : null;
  return (body.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

/**
 * Answers each of the session's pending `wait_for_sessions` calls whose sub-sessions have all finished
 * (an id that is not a sub-session of this session counts as finished, with an error). Runs under the
 * session's row lock, so an answer is written once: it takes the call off the pending actions.
 */
export function answerWaits(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string },
): Promise<number> {
  const { tenantId, sessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    const row = await trx
      .selectFrom("sessions")
      .select(["state", "last_seq"])
      .where("tenant_id", "=", tenantId)
      .where("id", "=", sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined) return 0;
    const state: SessionState = readSessionState(row.state);
    const waits = state.pending_actions.filter((action) => action.name === "wait_for_sessions");
    if (waits.length === 0) return 0;
    const children = await trx
      .selectFrom("sessions")
      .select(["id", "child_outcome"])
      .where("tenant_id", "=", tenantId)
      .where("parent_session_id", "=", sessionId)
      .execute();
    const outcomes = new Map(children.map((child) => [child.id, child.child_outcome as ChildOutcome | null]));
    const answers = waits.flatMap((wait) => {
      const parsed = WaitForSessionsInput.safeParse(wait.input);
      const ids = parsed.success ? parsed.data.ids : [];
      const results = ids.map((id) => {
        const outcome = outcomes.get(id);
        if (outcome === undefined) return { id, status: "error", error: "not a sub-session of this session" };
        return outcome === null ? null : { id, ...outcome };
      });
      if (results.includes(null)) return [];
      const text = JSON.stringify({ results });
      return [
        {
          type: "user.custom_tool_result" as const,
          custom_tool_use_id: wait.event_id,
          content: [{ type: "text" as const, text }],
          is_error: !parsed.success,
        },
      ];
    });
    await append(trx, {
      tenantId,
      sessionId,
      events: answers,
      head: { lastSeq: row.last_seq, state },
    });
    return answers.length;
  });
}

/**
 * Carries a parent's interrupt or end down to its sub-sessions that are still going: an interrupt
 * interrupts them, an end archives them (a child of an ended session would report to no one). Their
 * own events cascade on to their children. Returns the events appended, for the caller to signal the
 * workers holding those children.
 */
export function cascadeToChildren(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string },
  cause: "interrupt" | "end",
): Promise<SessionEvent[]> {
  const { tenantId, sessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    const children = await trx
      .selectFrom("sessions")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("parent_session_id", "=", sessionId)
      .where("status", "<>", "terminated")
      .where("child_outcome", "is", null)
      .orderBy("id")
      .execute();
    const appended: SessionEvent[] = [];
    for (const child of children) {
      const event: NewEvent =
        cause === "interrupt"
          ? { type: "user.interrupt" }
          : { type: "session.status_terminated", reason: "archived" };
      appended.push(...(await append(trx, { tenantId, sessionId: child.id, events: [event] })));
    }
    return appended;
  });
}

/**
 * Appends `event` to a direct sub-session of `parentSessionId` that has not finished (a message that
 * steers and wakes it, or its archiving), under the parent's then the child's row lock, as the
 * completion takes them. Refuses with `invalid_request`, writing nothing, for a session that is not
 * its child or has finished. `db` should be the transaction the calling tool's result commits in.
 */
export function appendToChild(
  db: Kysely<Database>,
  target: { tenantId: string; parentSessionId: string; childSessionId: string },
  event: NewEvent,
): Promise<SessionEvent> {
  const { tenantId, parentSessionId, childSessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    await trx
      .selectFrom("sessions")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", parentSessionId)
      .forUpdate()
      .execute();
    const child = await trx
      .selectFrom("sessions")
      .select(["parent_session_id", "state", "last_seq", "child_outcome"])
      .where("tenant_id", "=", tenantId)
      .where("id", "=", childSessionId)
      .forUpdate()
      .executeTakeFirst();
    if (child === undefined || child.parent_session_id !== parentSessionId) {
      throw new WakeloopError("invalid_request", `${childSessionId} is not a sub-session of this session`);
    }
    const state = readSessionState(child.state);
    const ended = childEnding(state);
    if (child.child_outcome !== null || ended !== null) {
      throw new WakeloopError(
        "invalid_request",
        `sub-session ${childSessionId} has finished (${ended ?? "reported"}); spawn another one instead`,
      );
    }
    const [appended] = await append(trx, {
      tenantId,
      sessionId: childSessionId,
      events: [event],
      head: { lastSeq: child.last_seq, state },
    });
    if (appended === undefined) throw new Error(`appending to ${childSessionId} returned no event`);
    return appended;
  });
}

/**
 * The session's idle sub-sessions at any depth (the ones that can wait on a person), in id order;
 * `lock` takes their rows for update, for a caller that answers their pending actions.
 */
export async function idleDescendants(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string },
  options: { lock: boolean },
): Promise<{ sessionId: string; state: SessionState }[]> {
  const { tenantId, sessionId } = target;
  const { rows } = await withTenant(db, tenantId, (trx) =>
    sql<{ id: string; state: unknown }>`
      WITH RECURSIVE tree AS (
        SELECT id FROM sessions WHERE tenant_id = ${tenantId} AND parent_session_id = ${sessionId}
        UNION ALL
        SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id WHERE s.tenant_id = ${tenantId}
      )
      SELECT s.id, s.state FROM sessions s JOIN tree t ON s.id = t.id
      WHERE s.tenant_id = ${tenantId} AND s.status = 'idle'
      ORDER BY s.id ${options.lock ? sql`FOR UPDATE OF s` : sql``}`.execute(trx),
  );
  return rows.map((row) => ({ sessionId: row.id, state: readSessionState(row.state) }));
}

/**
 * Shows a sub-session's approvals on the stream of each of its ancestors: one
 * `session.child_requires_action` per ancestor for the sub-session's `requires_action` idle `idleEventId`
 * (a repeated delivery finds it there already, under the ancestor's row lock). Returns how many ancestors
 * were told.
 */
export function surfaceChildApprovals(
  db: Kysely<Database>,
  target: { tenantId: string; sessionId: string },
  idleEventId: string,
): Promise<number> {
  const { tenantId, sessionId } = target;
  return withTenant(db, tenantId, async (trx) => {
    const child = await trx
      .selectFrom("sessions")
      .select("state")
      .where("tenant_id", "=", tenantId)
      .where("id", "=", sessionId)
      .executeTakeFirst();
    if (child === undefined) return 0;
    const eventIds = readSessionState(child.state)
      .pending_actions.filter((action) => action.kind === "tool_confirmation")
      .map((action) => action.event_id);
    if (eventIds.length === 0) return 0;
    const { rows: ancestors } = await sql<{ id: string }>`
      WITH RECURSIVE up AS (
        SELECT parent_session_id AS id FROM sessions WHERE tenant_id = ${tenantId} AND id = ${sessionId}
        UNION ALL
        SELECT s.parent_session_id FROM sessions s JOIN up ON s.id = up.id WHERE s.tenant_id = ${tenantId}
      )
      SELECT id FROM up WHERE id IS NOT NULL`.execute(trx);
    let told = 0;
    for (const { id } of ancestors) {
      await trx
        .selectFrom("sessions")
        .select("id")
        .where("tenant_id", "=", tenantId)
        .where("id", "=", id)
        .forUpdate()
        .execute();
      const already = await trx
        .selectFrom("session_events")
        .select("seq")
        .where("tenant_id", "=", tenantId)
        .where("session_id", "=", id)
        .where("type", "=", "session.child_requires_action")
        .where(sql`body->>'idle_event_id'`, "=", idleEventId)
        .executeTakeFirst();
      if (already !== undefined) continue;
      await append(trx, {
        tenantId,
        sessionId: id,
        events: [
          {
            type: "session.child_requires_action",
            child_session_id: sessionId,
            idle_event_id: idleEventId,
            event_ids: eventIds,
          },
        ],
      });
      told += 1;
    }
    return told;
  });
}
