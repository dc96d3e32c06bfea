import { SpanStatusCode } from "@opentelemetry/api";
import { addUsage, type SessionEvent, type TokenUsage, textContent } from "@wakeloop/contracts";
import { type NewEvent, startedToolCalls, type ToolCallUpdate } from "@wakeloop/db";
import { INTERRUPTED_BEFORE_RUN } from "@wakeloop/session-core";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  GenAiOperation,
} from "@wakeloop/telemetry";
import { type EffectiveToolSet, toolsByName } from "@wakeloop/tool-runtime";
import { effectiveTools } from "../context/build-request";
import type { ModelUsage } from "../wake/cost-meter";
import { secondsSince, type ToolErrorType } from "../wake-metrics";
import { executeTool } from "./execute-tool";
import type { CallPlan } from "./plan-calls";
import type { RunnableCall, ToolContext } from "./tool-context";
import { errorOutcome, resultEvent, type ToolOutcome } from "./tool-outcome";

export const UNKNOWN_OUTCOME =
  "The worker running this call stopped before its result was recorded, and the tool is not idempotent, so it was not run again. Check its effects before retrying.";
export const NOT_ALLOWED_NOW = "This tool is no longer available to this session, so the call did not run.";

/** Result events in the model's order, and the ledger outcomes that commit with them. */
export interface CallResults {
  events: NewEvent[];
  settle: ToolCallUpdate[];
  /** Other sessions' events to signal to their workers once the results commit (`ToolOutcome.stops`). */
  stops: SessionEvent[];
}

/** Runs the plan's groups in order, calls within a group side by side; results in the model's order. */
export async function executeCalls(ctx: ToolContext, plan: Pick<CallPlan, "groups">): Promise<CallResults> {
  const outcomes = new Map<string, ToolOutcome>();
  for (const group of plan.groups) {
    // Checked again at execution time (invariant 5): an earlier group may have changed the runtime facts.
    const allowed = alwaysAllowed(effectiveTools(ctx.view, ctx.settings));
    await Promise.all(
      group.map(async (call) =>
        outcomes.set(
          call.id,
          allowed.has(call.tool.name) ? await runCall(ctx, call) : errorOutcome(NOT_ALLOWED_NOW),
        ),
      ),
    );
  }
  return resultsInOrder(
    ctx,
    plan.groups.flat().map((call) => ({ id: call.id, mcp: call.tool.ownership === "mcp" })),
    outcomes,
  );
}

const allowedByToolSet = new WeakMap<EffectiveToolSet, ReadonlySet<string>>();

/** The names of the set's `always_allow` tools; a wake reuses its tool set, so each set is scanned once. */
function alwaysAllowed(effective: EffectiveToolSet): ReadonlySet<string> {
  let names = allowedByToolSet.get(effective);
  if (names === undefined) {
    names = new Set(
      effective.tools.filter((tool) => tool.permissionPolicy === "always_allow").map((tool) => tool.name),
    );
    allowedByToolSet.set(effective, names);
  }
  return names;
}

/**
 * Calls a previous wake left without a result (invariant 7): confirmed ones run now, denied ones get
 * the user's message, ones that started and may have had effects are re-run only when idempotent.
 * Each is checked against the current effective tools first (invariant 5). A call an interrupt stopped
 * never runs, and once this wake sees an interrupt no further call starts: both get the interrupted
 * result.
 */
export async function resumeCalls(ctx: ToolContext): Promise<CallResults> {
  const { view } = ctx;
  const unresolved = view.unresolvedCalls();
  if (unresolved.length === 0) return { events: [], settle: [], stops: [] };
  const pending = new Set(view.state.pending_actions.map((action) => action.event_id));
  const stopped = new Set(view.state.interrupted_call_ids);
  const started = await startedToolCalls(ctx.db, view.tenantId, view.sessionId);
  const effective = effectiveTools(view, ctx.settings);
  const tools = toolsByName(effective);
  const order: AnsweredCall[] = [];
  const outcomes = new Map<string, ToolOutcome>();
  for (const call of unresolved) {
    const answer = call.evaluated_permission === "ask" ? view.confirmationFor(call.id) : undefined;
    const tool = tools.get(call.name);
    const step = resumeStep({
      permission: call.evaluated_permission,
      pending: pending.has(call.id),
      answer: answer?.result,
      stopped: stopped.has(call.id),
      tool,
      started: started.has(call.id),
      aborted: ctx.signal.aborted,
    });
    if (step === "wait") continue;
    order.push({ id: call.id, mcp: call.type === "agent.mcp_tool_use" });
    if (step === "denied") {
      outcomes.set(call.id, errorOutcome(answer?.deny_message ?? "The user denied this tool call."));
    } else if (step === "gone" || tool === undefined) {
      outcomes.set(call.id, errorOutcome(NOT_ALLOWED_NOW));
    } else if (step === "unknown") {
      outcomes.set(call.id, { ...errorOutcome(UNKNOWN_OUTCOME), unknown: true });
    } else if (step === "interrupted") {
      outcomes.set(call.id, errorOutcome(INTERRUPTED_BEFORE_RUN));
    } else {
      outcomes.set(
        call.id,
        await runCall(ctx, { id: call.id, tool, input: call.input, approved: answer !== undefined }),
      );
    }
  }
  return resultsInOrder(ctx, order, outcomes);
}

export interface ResumeFacts {
  /** What the call's `agent.tool_use` recorded when it was planned. */
  permission: "allow" | "ask" | "deny";
  /** Still among the session's pending actions (no answer yet). */
  pending: boolean;
  /** The `user.tool_confirmation` committed for this exact call id, if any. */
  answer: "allow" | "deny" | undefined;
  /** An interrupt stopped it. */
  stopped: boolean;
  /** The tool in this wake's effective set, if it still is. */
  tool: Pick<RunnableCall["tool"], "idempotent"> | undefined;
  /** The ledger says it started before a crash. */
  started: boolean;
  /** This wake saw an interrupt. */
  aborted: boolean;
}

/**
 * What becomes of a call a previous wake left without a result. An asked call runs only with an
 * `allow` for its own id (invariant 4); without an answer it keeps waiting, unless an interrupt
 * stopped it.
 */
export function resumeStep(
  facts: ResumeFacts,
): "wait" | "denied" | "gone" | "unknown" | "interrupted" | "run" {
  if (facts.pending || facts.permission === "deny") return "wait";
  if (facts.permission === "ask" && facts.answer === undefined && !facts.stopped) return "wait";
  if (facts.answer === "deny") return "denied";
  if (facts.tool === undefined) return "gone";
  if (facts.started && !facts.tool.idempotent) return "unknown";
  if (facts.stopped || facts.aborted) return "interrupted";
  return "run";
}

/**
 * The session state once `results` commit, as far as the budget goes: model tokens a tool spent
 * (llm_generate) and budgets carved for sub-sessions (spawn_session) count before the next request is
 * decided, not one request later.
 */
export function withToolUsage<
  S extends { usage: TokenUsage; cost_micro_usd: number | null; delegated_tokens: number },
>(state: S, results: CallResults): S {
  const recorded = results.events.filter((event) => event.type === "session.usage").at(-1);
  const held = results.events.reduce(
    (sum, event) => (event.type === "session.child_created" ? sum + (event.token_budget ?? 0) : sum),
    0,
  );
  return {
    ...state,
    ...(recorded?.type === "session.usage" && {
      usage: recorded.usage,
      cost_micro_usd: recorded.cost?.session_micro_usd ?? null,
    }),
    delegated_tokens: state.delegated_tokens + held,
  };
}

function settledStatus(outcome: ToolOutcome): ToolCallUpdate["status"] {
  if (outcome.unknown) return "unknown";
  if (outcome.cancelled) return "cancelled";
  return outcome.isError ? "failed" : "succeeded";
}

/**
 * A call to answer, and whether it was announced as `agent.mcp_tool_use`. Known from the plan rather
 * than looked up in the history: calls that run in the commit announcing them are not in it yet.
 */
interface AnsweredCall {
  id: string;
  mcp: boolean;
}

function resultsInOrder(
  ctx: ToolContext,
  calls: readonly AnsweredCall[],
  outcomes: ReadonlyMap<string, ToolOutcome>,
): CallResults {
  const results: CallResults = { events: [], settle: [], stops: [] };
  let usage = ctx.view.state.usage;
  const spent: ModelUsage[] = [];
  for (const { id, mcp } of calls) {
    const outcome = outcomes.get(id);
    if (outcome === undefined) continue;
    results.events.push(
      ...(outcome.events ?? []),
      resultEvent(mcp, id, outcome.content, outcome.isError, outcome.revealed),
    );
    results.settle.push({ id, status: settledStatus(outcome), result: outcome.result });
    results.stops.push(...(outcome.stops ?? []));
    if (outcome.usage !== undefined) {
      usage = addUsage(usage, outcome.usage.usage);
      spent.push(outcome.usage);
    }
  }
  if (spent.length > 0) {
    const cost = ctx.costs.charge(spent);
    results.events.push({ type: "session.usage", usage, budget: ctx.view.state.budget, cost });
  }
  return results;
}

async function runCall(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome> {
  return ctx.tracer.startActiveSpan(`execute_tool ${call.tool.name}`, async (span) => {
    span.setAttributes({
      [ATTR_GEN_AI_OPERATION_NAME]: GenAiOperation.executeTool,
      [ATTR_GEN_AI_TOOL_NAME]: call.tool.name,
      [ATTR_GEN_AI_TOOL_CALL_ID]: call.id,
    });
    const started = performance.now();
    let errorType: ToolErrorType | undefined;
    try {
      if (!call.tool.idempotent && !ctx.inCommit) await ctx.writer.markRunning(call.id);
      const outcome = await executeTool(ctx, call);
      if (outcome.isError) {
        errorType = "tool_error";
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return call.note ? { ...outcome, content: [...outcome.content, ...textContent(call.note)] } : outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (ctx.signal.aborted && call.tool.interruptBehavior === "cancel") {
        errorType = "cancelled";
        return { ...errorOutcome("The call was cancelled by an interrupt."), cancelled: true };
      }
      errorType = "exception";
      return errorOutcome(`The tool failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      ctx.metrics.toolCall(call.tool.name, secondsSince(started), errorType);
      span.end();
    }
  });
}
