import { context, propagation } from "@opentelemetry/api";
import { textContent, WakeloopError } from "@wakeloop/contracts";
import { appendToChild, type NewEvent, spawnChildSession, type TraceHeaders } from "@wakeloop/db";
import { chosenModel } from "@wakeloop/session-core";
import {
  carveChildBudget,
  ReportResultInput,
  SessionsSendInput,
  SPAWN_ALIASES,
  SpawnSessionInput,
  SubagentsInput,
  spawnRefusal,
} from "@wakeloop/tool-runtime";
import { runNavigationTool } from "./navigation-tools";
import type { RunnableCall, ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

const SPAWNS = new Set<string>(["spawn_session", ...SPAWN_ALIASES]);

/** Refusals the model can act on (a smaller budget, another agent, fewer children): error results. */
const CORRECTABLE = new Set(["invalid_request", "sub_session_limit"]);

/**
 * `spawn_session` (and its aliases) and `report_result`, inline: the child is created in the transaction
 * the call's result commits in, and the parent's `session.child_created` commits with that result.
 * `wait_for_sessions` is not here: it pauses the session and the orchestrator answers it.
 */
export async function runSubSessionTool(
  ctx: ToolContext,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  if (name === "report_result") {
    // The wake ends the session after this step (`reportedIn`); the orchestrator sends the result.
    ReportResultInput.parse(input);
    return jsonOutcome({ reported: true });
  }
  try {
    if (SPAWNS.has(name)) return await spawn(ctx, SpawnSessionInput.parse(input));
    if (name === "sessions_send") {
      const { session_id, message } = SessionsSendInput.parse(input);
      return await send(ctx, session_id, message);
    }
    if (name === "subagents") return await subagents(ctx, SubagentsInput.parse(input));
    return null;
  } catch (error) {
    if (error instanceof WakeloopError && CORRECTABLE.has(error.code)) return errorOutcome(error.message);
    throw error;
  }
}

async function spawn(ctx: ToolContext, input: SpawnSessionInput): Promise<ToolOutcome> {
  const { view, settings } = ctx;
  // Checked again at execution (invariant 5): the tool set of the turn may predate sibling spawns.
  const refusal = spawnRefusal(
    { depth: view.depth, childCount: view.state.child_session_ids.length },
    { maxDepth: settings.maxSubSessionDepth, maxChildren: settings.maxChildrenPerSession },
  );
  if (refusal !== null) return errorOutcome(refusal.reason);
  const child = await spawnChildSession(ctx.db, {
    tenantId: view.tenantId,
    parent: {
      sessionId: view.sessionId,
      agentId: view.agentId,
      environmentId: view.environment?.id ?? null,
      depth: view.depth,
    },
    agentId: input.agent_id,
    task: input.task,
    title: input.title ?? null,
    // The child's trace links to the wake that spawned it (its first message carries the trace context).
    metadata: { parent_session_id: view.sessionId, parent_wake_id: ctx.writer.wakeId },
    terms: ({ agentLimit, agentModel, delegatedTokens }) => {
      const carved = carveChildBudget({
        parent: {
          ...view.state,
          usage: ctx.stepUsage ?? view.state.usage,
          delegated_tokens: delegatedTokens,
        },
        requested: input.token_limit,
        agentLimit,
      });
      if (!carved.ok) throw new WakeloopError("invalid_request", carved.message);
      return { budget: carved.budget, model: chosenModel(agentModel, input.model) };
    },
    maxChildren: settings.maxChildrenPerSession,
    traceHeaders: currentTraceHeaders(),
  });
  return {
    ...jsonOutcome({ id: child.id }),
    events: [
      {
        type: "session.child_created",
        child_session_id: child.id,
        token_budget: child.state.budget.max_total_tokens ?? 0,
      },
    ],
  };
}

/** A message into a sub-session that has not finished; it wakes it like any user message. */
async function send(ctx: ToolContext, sessionId: string, message: string): Promise<ToolOutcome> {
  const event = await toChild(ctx, sessionId, { type: "user.message", content: textContent(message) });
  return jsonOutcome({ session_id: sessionId, event_id: event.id });
}

/**
 * OpenClaw's `subagents`: `list` is `session_list_children` of this session, `steer` is `sessions_send`,
 * and `kill` archives the sub-session (the orchestrator then tells this session it ended, as archived,
 * and archives its own sub-sessions).
 */
async function subagents(ctx: ToolContext, input: SubagentsInput): Promise<ToolOutcome | null> {
  if (input.action === "list") return runNavigationTool(ctx, "session_list_children", {});
  if (input.session_id === undefined) return errorOutcome(`${input.action} needs session_id`);
  if (input.action === "steer") {
    if (input.message === undefined) return errorOutcome("steer needs message");
    return send(ctx, input.session_id, input.message);
  }
  const stop = await toChild(ctx, input.session_id, {
    type: "session.status_terminated",
    reason: "archived",
  });
  // A sub-session in a model call stops at once, not at the end of its step.
  return { ...jsonOutcome({ session_id: input.session_id, killed: true }), stops: [stop] };
}

function toChild(ctx: ToolContext, childSessionId: string, event: NewEvent) {
  const { view } = ctx;
  return appendToChild(
    ctx.db,
    { tenantId: view.tenantId, parentSessionId: view.sessionId, childSessionId },
    event,
  );
}

/**
 * Whether a step ran `report_result`: the sub-session then ends (`completed`) after the step, so nothing
 * runs after it. Its input was validated by the batch plan, so the call cannot fail.
 */
export function reportsResult(groups: readonly (readonly RunnableCall[])[]): boolean {
  return groups.some((group) => group.some((call) => call.tool.name === "report_result"));
}

/**
 * The spawning call's trace context: the child's first message carries it through the outbox, so the
 * orchestrator queues the child's first wake, and the worker runs it, inside the parent wake's trace.
 */
function currentTraceHeaders(): TraceHeaders | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const { traceparent, tracestate } = carrier;
  return traceparent === undefined ? undefined : { traceparent, ...(tracestate && { tracestate }) };
}
