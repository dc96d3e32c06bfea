import type { SessionEvent } from "@wakeloop/contracts";
import { listAgentSessions, listSessionWakes, type NavigatedSession, readEvents } from "@wakeloop/db";
import { readTrace, type TraceSpan } from "@wakeloop/telemetry";
import {
  AgentCompareSetupInput,
  SessionGetEventsInput,
  SessionGetTraceInput,
  SessionListChildrenInput,
  SessionListInput,
  SessionRefInput,
  type SetupFingerprint,
} from "@wakeloop/tool-runtime";
import { clip, currentFingerprint, PREVIEW_CHARS, summary, withTarget } from "./navigation-target";
import { outcomePosture } from "./outcome-tools";
import { compareSetup, describeContext, describeSetup } from "./setup-tools";
import type { ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/*
 * The session navigation tools. Every read names the tenant and the agent of the calling session, so
 * another agent's or tenant's session is "not found", never shown; every answer is bounded (pages,
 * truncated events and attributes). Reads only: they run in parallel with anything.
 */

/** Past this many characters an event is shown as a truncated preview. */
const EVENT_CHARS = 2_000;
const ATTRIBUTE_CHARS = 200;
const ATTRIBUTES_PER_SPAN = 20;
/** How many events a filtered page reads through to find its matches. */
const EVENT_SCAN = 500;

export async function runNavigationTool(
  ctx: ToolContext,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  switch (name) {
    case "session_list":
      return sessionList(ctx, SessionListInput.parse(input));
    case "session_list_children":
      return sessionListChildren(ctx, SessionListChildrenInput.parse(input));
    case "session_get_snapshot":
      return withTarget(ctx, SessionRefInput.parse(input).session_id, (target) => snapshot(ctx, target));
    case "session_get_events": {
      const args = SessionGetEventsInput.parse(input);
      return withTarget(ctx, args.session_id, (target) => sessionEvents(ctx, target, args));
    }
    case "session_get_trace": {
      const args = SessionGetTraceInput.parse(input);
      return withTarget(ctx, args.session_id, (target) => sessionTrace(ctx, target, args));
    }
    case "session_describe_context":
      return withTarget(ctx, SessionRefInput.parse(input).session_id, (target) =>
        describeContext(ctx, target),
      );
    case "agent_describe_setup":
      return withTarget(ctx, SessionRefInput.parse(input).session_id, (target) =>
        jsonOutcome(describeSetup(ctx, target)),
      );
    case "agent_compare_setup":
      return compareSetup(ctx, AgentCompareSetupInput.parse(input));
    default:
      return null;
  }
}

async function sessionList(ctx: ToolContext, args: SessionListInput): Promise<ToolOutcome> {
  const { view } = ctx;
  const query = {
    tenantId: view.tenantId,
    agentId: view.agentId,
    ...(args.status !== undefined && { status: args.status }),
    ...(args.active_minutes !== undefined && { activeMinutes: args.active_minutes }),
    ...(args.lineage !== undefined && {
      near: { sessionId: view.sessionId, parentSessionId: view.parentSessionId, lineage: args.lineage },
    }),
  };
  const hasOutcome = args.has_outcome ?? postureNeedsOutcome(args);
  if (!postureFiltered(args)) {
    const page = await listAgentSessions(ctx.db, {
      ...query,
      limit: args.limit,
      ...(hasOutcome !== undefined && { hasOutcome }),
      ...(args.after_id !== undefined && { afterId: args.after_id }),
    });
    return jsonOutcome({ sessions: await summaries(ctx, page.sessions), next_after_id: page.nextAfterId });
  }
  // The evaluator posture is the pure trend over each session's graded attempts, so a page filtered on
  // it reads through at most POSTURE_SCAN sessions for its matches and says where it stopped.
  const current = currentFingerprint(ctx);
  const sessions = [];
  let after = args.after_id;
  let scanned = 0;
  let more = true;
  while (more && sessions.length < args.limit && scanned < POSTURE_SCAN) {
    const page = await listAgentSessions(ctx.db, {
      ...query,
      limit: Math.min(50, POSTURE_SCAN - scanned),
      ...(hasOutcome !== undefined && { hasOutcome }),
      ...(after !== undefined && { afterId: after }),
    });
    more = page.nextAfterId !== null;
    for (const [index, target] of page.sessions.entries()) {
      scanned += 1;
      after = target.session.id;
      const entry = await listed(ctx, target, current);
      if (postureMatches(args, entry)) sessions.push(entry);
      if (sessions.length === args.limit) {
        more ||= index < page.sessions.length - 1;
        break;
      }
    }
  }
  return jsonOutcome({ sessions, next_after_id: more ? (after ?? null) : null });
}

/** How many sessions a page filtered on evaluator posture reads through at most. */
const POSTURE_SCAN = 200;

type PostureFilter = Pick<SessionListInput, "outcome_status" | "outcome_trend" | "promotion_ready">;

function postureFiltered(args: PostureFilter): boolean {
  return (
    args.outcome_trend !== undefined ||
    args.promotion_ready !== undefined ||
    args.outcome_status !== undefined
  );
}

/** A trend, readiness or graded status exists only for sessions with an outcome; `no_outcome` only without. */
function postureNeedsOutcome(args: PostureFilter): boolean | undefined {
  if (args.outcome_status === "no_outcome") return false;
  if (args.outcome_trend !== undefined || args.promotion_ready === true) return true;
  return args.outcome_status === undefined ? undefined : true;
}

function postureMatches(
  args: PostureFilter,
  posture: { outcome_status: string; outcome_trend: string | null; promotion_ready: boolean },
): boolean {
  return (
    (args.outcome_status === undefined || posture.outcome_status === args.outcome_status) &&
    (args.outcome_trend === undefined || posture.outcome_trend === args.outcome_trend) &&
    (args.promotion_ready === undefined || posture.promotion_ready === args.promotion_ready)
  );
}

/** Page summaries with each session's evaluator posture, read only for sessions that have an outcome. */
async function summaries(ctx: ToolContext, targets: NavigatedSession[]) {
  const current = currentFingerprint(ctx);
  const entries = [];
  for (const target of targets) entries.push(await listed(ctx, target, current));
  return entries;
}

/** One session as the list tools show it: its summary and its evaluator posture. */
async function listed(ctx: ToolContext, target: NavigatedSession, current: SetupFingerprint) {
  const { outcome: _, ...posture } = await outcomeSummary(ctx, target);
  return { ...summary(ctx, target, current), ...posture };
}

/** The openboa evaluator posture of a navigated session, lifted to the top level. */
async function outcomeSummary(ctx: ToolContext, target: NavigatedSession) {
  const { session } = target;
  const outcome = target.hasOutcome
    ? await outcomePosture(ctx.db, { tenantId: session.tenant_id, sessionId: session.id })
    : null;
  return {
    outcome_status:
      outcome === null ? "no_outcome" : outcome.promotion_ready ? "promotion_ready" : "not_ready",
    outcome_trend: outcome?.trend ?? null,
    promotion_ready: outcome?.promotion_ready ?? false,
    outcome,
  };
}

async function sessionListChildren(ctx: ToolContext, args: SessionListChildrenInput): Promise<ToolOutcome> {
  return withTarget(ctx, args.session_id, async (parent) => {
    const page = await listAgentSessions(ctx.db, {
      tenantId: ctx.view.tenantId,
      agentId: ctx.view.agentId,
      parentSessionId: parent.session.id,
      limit: args.limit,
      ...(args.after_id !== undefined && { afterId: args.after_id }),
    });
    return jsonOutcome({
      parent_session_id: parent.session.id,
      children: await summaries(ctx, page.sessions),
      next_after_id: page.nextAfterId,
    });
  });
}

async function snapshot(ctx: ToolContext, target: NavigatedSession): Promise<ToolOutcome> {
  const { session } = target;
  const { state } = session;
  const recent = await readEvents(ctx.db, {
    tenantId: session.tenant_id,
    sessionId: session.id,
    afterSeq: Math.max(0, state.last_seq - 50),
    limit: 50,
  });
  const lastMessage = recent.findLast((event) => event.type === "agent.message");
  const wakes = await listSessionWakes(ctx.db, {
    tenantId: session.tenant_id,
    sessionId: session.id,
    limit: 5,
  });
  const current = currentFingerprint(ctx);
  const base = summary(ctx, target, current);
  const next: Array<{ tool: string; why: string }> = [];
  if (!base.setup_matches_current) {
    next.push({ tool: "agent_compare_setup", why: "it ran with a different setup than this session" });
  }
  if (base.requires_action !== null) {
    next.push({ tool: "session_get_events", why: "it waits on an action; read the call it waits on" });
  }
  if (wakes[0] !== undefined)
    next.push({ tool: "session_get_trace", why: "reread its latest wake in detail" });
  next.push({ tool: "session_get_events", why: "page through its history" });
  return jsonOutcome({
    ...base,
    metadata: state.metadata,
    budget: state.budget,
    sandbox_status: state.sandbox_status,
    pending_actions: state.pending_actions.slice(0, 10).map((action) => ({
      event_id: action.event_id,
      kind: action.kind,
      name: action.name,
    })),
    last_agent_message:
      lastMessage?.type === "agent.message"
        ? clip(
            lastMessage.content
              .map((block) => (block.type === "text" ? block.text : `[${block.type}]`))
              .join(""),
            EVENT_CHARS,
          )
        : null,
    recent_wakes: wakes.map((wake) => ({
      id: wake.id,
      status: wake.status,
      reason: wake.reason,
      attempt: wake.attempt,
      created_at: wake.createdAt.toISOString(),
      finished_at: wake.finishedAt?.toISOString() ?? null,
    })),
    ...(await outcomeSummary(ctx, target)),
    next_steps: next.filter((step, index) => next.findIndex((other) => other.tool === step.tool) === index),
  });
}

async function sessionEvents(
  ctx: ToolContext,
  target: NavigatedSession,
  args: SessionGetEventsInput,
): Promise<ToolOutcome> {
  const { session } = target;
  const types = args.types === undefined ? null : new Set(args.types);
  const scanned = await readEvents(ctx.db, {
    tenantId: session.tenant_id,
    sessionId: session.id,
    afterSeq: args.after_seq,
    limit: types === null ? args.limit : EVENT_SCAN,
  });
  const matching = types === null ? scanned : scanned.filter((event) => types.has(event.type));
  const events = matching.slice(0, args.limit);
  // More may follow when the page filled up, or when the scan stopped before the end.
  const lastRead = events.length === args.limit ? events.at(-1)?.seq : scanned.at(-1)?.seq;
  const full = events.length === args.limit || scanned.length === EVENT_SCAN;
  const nextAfterSeq = full && lastRead !== undefined && lastRead < session.state.last_seq ? lastRead : null;
  return jsonOutcome({
    session_id: session.id,
    last_seq: session.state.last_seq,
    events: events.map(boundEvent),
    next_after_seq: nextAfterSeq,
  });
}

function boundEvent(event: SessionEvent): unknown {
  const text = JSON.stringify(event);
  if (text.length <= EVENT_CHARS) return event;
  return {
    id: event.id,
    seq: event.seq,
    type: event.type,
    created_at: event.created_at,
    wake_id: event.wake_id ?? null,
    truncated: true,
    chars: text.length,
    preview: text.slice(0, PREVIEW_CHARS),
  };
}

async function sessionTrace(
  ctx: ToolContext,
  target: NavigatedSession,
  args: SessionGetTraceInput,
): Promise<ToolOutcome> {
  const { session } = target;
  const [wake] = await listSessionWakes(ctx.db, {
    tenantId: session.tenant_id,
    sessionId: session.id,
    limit: 1,
    ...(args.wake_id !== undefined && { wakeId: args.wake_id }),
  });
  if (wake === undefined) {
    return args.wake_id === undefined
      ? jsonOutcome({ session_id: session.id, wake_id: null, spans: [], span_count: 0, truncated: false })
      : errorOutcome(`wake ${args.wake_id} is not a wake of session ${session.id}`);
  }
  const flat: ReturnType<typeof flatSpan>[] = [];
  const visit = (span: TraceSpan, depth: number) => {
    flat.push(flatSpan(span, depth));
    for (const child of span.children) visit(child, depth + 1);
  };
  for (const root of await readTrace(ctx.db, { tenantId: session.tenant_id, wakeId: wake.id }))
    visit(root, 0);
  return jsonOutcome({
    session_id: session.id,
    wake_id: wake.id,
    wake: { status: wake.status, reason: wake.reason, attempt: wake.attempt },
    span_count: flat.length,
    truncated: flat.length > args.limit,
    spans: flat.slice(0, args.limit),
  });
}

function flatSpan(span: TraceSpan, depth: number) {
  const attributes = Object.entries(span.attributes)
    .slice(0, ATTRIBUTES_PER_SPAN)
    .map(([key, value]) => [key, typeof value === "string" ? clip(value, ATTRIBUTE_CHARS) : value]);
  return {
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    depth,
    name: span.name,
    service: span.serviceName,
    start_time: span.startTime.toISOString(),
    duration_ms: span.durationMs,
    status: span.status.code,
    ...(span.status.message !== null && { status_message: clip(span.status.message, ATTRIBUTE_CHARS) }),
    attributes: Object.fromEntries(attributes),
  };
}
