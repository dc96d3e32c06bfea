import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { textContent } from "@wakeloop/contracts";
import { type Database, type NewEvent, newId, withTenant } from "@wakeloop/db";
import type { ModelToolCall } from "@wakeloop/model-providers";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import { INTERRUPTED_BEFORE_RUN } from "@wakeloop/session-core";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  GenAiOperation,
} from "@wakeloop/telemetry";
import {
  type BatchPlan,
  checkLoop,
  dropStrictNulls,
  type EffectiveTool,
  type EffectiveToolSet,
  type LoopCallRecord,
  loopCall,
  loopCallRecord,
  planBatch,
} from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { effectiveTools } from "../context/build-request";
import type { SessionView } from "../wake/session-view";
import type { LedgerEntry, LedgerUpdate } from "../wake/tool-ledger";
import type { WakeSettings } from "../wake/wake-settings";
import type { WakeWriter, WriteInput } from "../wake/wake-writer";
import { execApproval } from "./exec-approval";
import { executeTool } from "./execute-tool";
import { errorOutcome, type ToolOutcome } from "./tool-outcome";

export interface ToolContext {
  db: Kysely<Database>;
  sandbox: SandboxClient | null;
  tracer: Tracer;
  view: SessionView;
  writer: WakeWriter;
  settings: WakeSettings;
  /** Interrupt or lost lease: `cancel` tools stop, `block` tools finish. */
  signal: AbortSignal;
}

export interface RunnableCall {
  id: string;
  tool: EffectiveTool;
  input: Record<string, unknown>;
  /** A loop-detection warning added to the result as a runtime note for the model. */
  note?: string;
  /** A person allowed this call (`user.tool_confirmation`), which also covers the exec policy's ask. */
  approved?: boolean;
}

export interface CallPlan {
  batch: BatchPlan;
  /** The tool-use events, in the model's order, with the ids the batch plan uses. */
  announce: NewEvent[];
  /** Error results of calls that never run, committed with the announcement. */
  rejected: NewEvent[];
  planned: LedgerEntry[];
  /** Groups of calls to run now, one group after another. */
  groups: RunnableCall[][];
  /** Calls waiting on a person (`always_ask`) or on the client (custom tools, `ask_user`). */
  pendingIds: string[];
  /** Set when loop detection stops the wake. */
  stop?: string;
}

export const UNKNOWN_OUTCOME =
  "The worker running this call stopped before its result was recorded, and the tool is not idempotent, so it was not run again. Check its effects before retrying.";
export const NOT_ALLOWED_NOW = "This tool is no longer available to this session, so the call did not run.";

/**
 * Turns the model's calls into events and groups (DESIGN §5): ids are our event ids, rejected calls get
 * error results at once, `always_ask` calls and client-fulfilled calls pause the session, the rest run
 * by the batch plan.
 */
export function planModelCalls(
  ctx: ToolContext,
  effective: EffectiveToolSet,
  calls: readonly ModelToolCall[],
  /** Tools sent in OpenAI strict mode this turn. */
  strictTools: ReadonlySet<string>,
): CallPlan {
  const byName = new Map(effective.tools.map((tool) => [tool.name, tool]));
  // Strict-mode arguments carry nulls for omitted optional fields; the tool's own schema wants them absent.
  const withIds = calls.map((call) => {
    const tool = byName.get(call.name);
    const input =
      tool && strictTools.has(call.name)
        ? (dropStrictNulls(tool.inputSchema, call.input) as Record<string, unknown>)
        : call.input;
    return { ...call, input, id: newId("event") };
  });
  const badInput = new Map(
    withIds.flatMap((call) => (call.inputError ? [[call.id, call.inputError.message] as const] : [])),
  );
  const batch = planBatch(
    withIds.map((call) => ({ id: call.id, name: call.name, input: call.input })),
    effective,
  );
  const plan: CallPlan = { batch, announce: [], rejected: [], planned: [], groups: [], pendingIds: [] };
  const runnable = new Map<string, RunnableCall>();
  const history = finishedCalls(ctx.view);

  for (const planned of batch.calls) {
    const call = withIds[planned.index];
    if (call === undefined) continue;
    const tool = byName.get(call.name);
    const inputError = badInput.get(call.id);
    const loop = checkLoop(history, loopCall(call.name, call.input), ctx.view.agent.loop_detection);
    if (loop.verdict === "stop") plan.stop ??= loop.message;
    // The environment's exec policy joins the tool's permission: its ask pauses, its deny rejects.
    const exec = tool && execApproval(ctx.view.environment?.spec.config ?? null, tool, call.input);
    const rejection =
      inputError !== undefined
        ? `the arguments for ${call.name} were not a JSON object (${inputError}); call the tool again with valid JSON`
        : planned.status === "rejected"
          ? planned.error.message
          : tool === undefined
            ? `unknown tool "${call.name}"`
            : exec?.verdict === "deny"
              ? `The command was not run: ${exec.reason}.`
              : loop.verdict === "block" || loop.verdict === "stop"
                ? loop.message
                : null;
    if (rejection !== null || tool === undefined) {
      const message = rejection ?? `unknown tool "${call.name}"`;
      plan.announce.push({
        id: call.id,
        type: "agent.tool_use",
        name: call.name,
        input: call.input,
        evaluated_permission: "deny",
        ...(exec?.evaluation && { exec: exec.evaluation }),
      });
      plan.rejected.push({
        type: "agent.tool_result",
        tool_use_id: call.id,
        content: textContent(message),
        is_error: true,
      });
      continue;
    }
    if (tool.executor === "client") {
      plan.announce.push({ id: call.id, type: "agent.custom_tool_use", name: call.name, input: call.input });
      plan.pendingIds.push(call.id);
      continue;
    }
    const permission = tool.permissionPolicy === "always_ask" || exec?.verdict === "ask" ? "ask" : "allow";
    plan.announce.push({
      id: call.id,
      type: "agent.tool_use",
      name: call.name,
      input: call.input,
      evaluated_permission: permission,
      ...(exec?.evaluation && { exec: exec.evaluation }),
    });
    plan.planned.push({ id: call.id, name: call.name, input: call.input, idempotent: tool.idempotent });
    if (permission === "ask") plan.pendingIds.push(call.id);
    else
      runnable.set(call.id, {
        id: call.id,
        tool,
        input: call.input,
        ...(loop.verdict === "warn" && { note: loop.message }),
      });
  }
  if (plan.stop !== undefined) {
    // The wake ends: nothing of this batch runs, and every call gets a result saying so.
    const unanswered = new Set(plan.announce.flatMap((event) => (event.id ? [event.id] : [])));
    for (const result of plan.rejected)
      if (result.type === "agent.tool_result") unanswered.delete(result.tool_use_id);
    for (const id of unanswered) {
      plan.rejected.push({
        type: "agent.tool_result",
        tool_use_id: id,
        content: textContent(plan.stop),
        is_error: true,
      });
    }
    plan.planned = plan.planned.filter((entry) => !unanswered.has(entry.id));
    plan.pendingIds = [];
    runnable.clear();
  }
  plan.groups = batch.groups
    .map((group) => group.flatMap((id) => runnable.get(id) ?? []))
    .filter((group) => group.length > 0);
  return plan;
}

/** Runs the plan's groups in order, calls within a group side by side; results in the model's order. */
export async function executeCalls(ctx: ToolContext, plan: Pick<CallPlan, "groups">): Promise<WriteInput> {
  const outcomes = new Map<string, ToolOutcome>();
  for (const group of plan.groups) {
    // Checked again at execution time (invariant 5): an earlier group may have changed the runtime facts.
    const allowed = new Set(
      effectiveTools(ctx.view, ctx.settings)
        .tools.filter((tool) => tool.permissionPolicy === "always_allow")
        .map((tool) => tool.name),
    );
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
    plan.groups.flat().map((call) => call.id),
    outcomes,
  );
}

/**
 * Calls a previous wake left without a result (invariant 7): confirmed ones run now, denied ones get
 * the user's message, ones that started and may have had effects are re-run only when idempotent.
 * Each is checked against the current effective tools first (invariant 5). A call an interrupt stopped
 * never runs, and once this wake sees an interrupt no further call starts: both get the interrupted
 * result.
 */
export async function resumeCalls(ctx: ToolContext): Promise<WriteInput> {
  const { view } = ctx;
  const unresolved = view.unresolvedCalls();
  if (unresolved.length === 0) return { events: [] };
  const pending = new Set(view.state.pending_actions.map((action) => action.event_id));
  const stopped = new Set(view.state.interrupted_call_ids);
  const started = new Set(
    (
      await withTenant(ctx.db, view.tenantId, (trx) =>
        trx
          .selectFrom("tool_calls")
          .select("id")
          .where("tenant_id", "=", view.tenantId)
          .where("session_id", "=", view.sessionId)
          .where("status", "=", "running")
          .execute(),
      )
    ).map((row) => row.id),
  );
  const effective = effectiveTools(view, ctx.settings);
  const tools = new Map(effective.tools.map((tool) => [tool.name, tool]));
  const order: string[] = [];
  const outcomes = new Map<string, ToolOutcome>();
  for (const call of unresolved) {
    if (pending.has(call.id) || call.evaluated_permission === "deny") continue;
    const answer = call.evaluated_permission === "ask" ? view.confirmationFor(call.id) : undefined;
    if (call.evaluated_permission === "ask" && answer === undefined && !stopped.has(call.id)) continue;
    order.push(call.id);
    const tool = tools.get(call.name);
    if (answer?.result === "deny") {
      outcomes.set(call.id, errorOutcome(answer.deny_message ?? "The user denied this tool call."));
    } else if (tool === undefined) {
      outcomes.set(call.id, errorOutcome(NOT_ALLOWED_NOW));
    } else if (started.has(call.id) && !tool.idempotent) {
      outcomes.set(call.id, { ...errorOutcome(UNKNOWN_OUTCOME), unknown: true });
    } else if (stopped.has(call.id) || ctx.signal.aborted) {
      outcomes.set(call.id, errorOutcome(INTERRUPTED_BEFORE_RUN));
    } else {
      outcomes.set(
        call.id,
        await runCall(ctx, { id: call.id, tool, input: call.input, approved: answer !== undefined }),
      );
    }
  }
  return resultsInOrder(order, outcomes);
}

interface LoopHistory {
  /** Events of the view already folded in. */
  seen: number;
  calls: Map<string, { name: string; input: unknown }>;
  records: LoopCallRecord[];
}
const loopHistories = new WeakMap<SessionView, LoopHistory>();

/**
 * The session's finished tool calls, oldest first, as loop detection reads them (invariant 6). Kept per
 * wake and extended with the events committed since the last step, so each call is hashed once.
 */
function finishedCalls(view: SessionView): LoopCallRecord[] {
  let history = loopHistories.get(view);
  if (history === undefined) {
    history = { seen: 0, calls: new Map(), records: [] };
    loopHistories.set(view, history);
  }
  const { events } = view;
  for (; history.seen < events.length; history.seen++) {
    const event = events[history.seen];
    if (event?.type === "agent.tool_use")
      history.calls.set(event.id, { name: event.name, input: event.input });
    else if (event?.type === "agent.tool_result") {
      const call = history.calls.get(event.tool_use_id);
      if (call) {
        history.records.push(
          loopCallRecord(call.name, call.input, { content: event.content, is_error: event.is_error }),
        );
      }
    }
  }
  return history.records;
}

function resultsInOrder(callIds: readonly string[], outcomes: ReadonlyMap<string, ToolOutcome>): WriteInput {
  const events: NewEvent[] = [];
  const settled: LedgerUpdate[] = [];
  for (const id of callIds) {
    const outcome = outcomes.get(id);
    if (outcome === undefined) continue;
    events.push({
      type: "agent.tool_result",
      tool_use_id: id,
      content: outcome.content,
      is_error: outcome.isError,
    });
    settled.push({
      id,
      status: outcome.unknown
        ? "unknown"
        : outcome.cancelled
          ? "cancelled"
          : outcome.isError
            ? "failed"
            : "succeeded",
      result: outcome.result,
    });
  }
  return { events, settled };
}

async function runCall(ctx: ToolContext, call: RunnableCall): Promise<ToolOutcome> {
  return ctx.tracer.startActiveSpan(`execute_tool ${call.tool.name}`, async (span) => {
    span.setAttributes({
      [ATTR_GEN_AI_OPERATION_NAME]: GenAiOperation.executeTool,
      [ATTR_GEN_AI_TOOL_NAME]: call.tool.name,
      [ATTR_GEN_AI_TOOL_CALL_ID]: call.id,
    });
    try {
      if (!call.tool.idempotent) await ctx.writer.markRunning(call.id);
      const outcome = await executeTool(ctx, call);
      if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR });
      return call.note ? { ...outcome, content: [...outcome.content, ...textContent(call.note)] } : outcome;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (ctx.signal.aborted && call.tool.interruptBehavior === "cancel") {
        return { ...errorOutcome("The call was cancelled by an interrupt."), cancelled: true };
      }
      return errorOutcome(`The tool failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      span.end();
    }
  });
}
