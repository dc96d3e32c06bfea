import { textContent } from "@wakeloop/contracts";
import { type NewEvent, newId, type ToolCallRecord } from "@wakeloop/db";
import type { ModelToolCall, ModelToolSpec } from "@wakeloop/model-providers";
import {
  type BatchPlan,
  callVerdict,
  checkLoop,
  clientUiCallProblem,
  dropStrictNulls,
  type EffectiveToolSet,
  finishedCall,
  type LoopCall,
  type LoopCallRecord,
  loopCall,
  planBatch,
  toolsByName,
} from "@wakeloop/tool-runtime";
import type { SessionView } from "../session/session-view";
import { execApproval } from "./exec-approval";
import type { RunnableCall } from "./tool-context";
import { resultEvent } from "./tool-outcome";

export interface CallPlan {
  batch: BatchPlan;
  /** The tool-use events, in the model's order, with the ids the batch plan uses. */
  announce: NewEvent[];
  /** Error results of calls that never run, committed with the announcement. */
  rejected: NewEvent[];
  /** The ledger entries of the announced calls that may run, as `planned`. */
  planned: ToolCallRecord[];
  /** Groups of calls to run now, one group after another. */
  groups: RunnableCall[][];
  /** Calls waiting on a person (`always_ask`) or on the client (custom tools, `ask_user`). */
  pendingIds: string[];
  /** Set when loop detection stops the wake. */
  stop?: string;
}

/**
 * Turns the model's calls into events and groups (DESIGN §5): ids are our event ids, rejected calls get
 * error results at once, `always_ask` calls and client-fulfilled calls pause the session, the rest run
 * by the batch plan. Each call's fate is `callVerdict`'s; this joins the facts it needs.
 */
export function planModelCalls(
  view: SessionView,
  effective: EffectiveToolSet,
  calls: readonly ModelToolCall[],
  /** Tools sent in OpenAI strict mode this turn. */
  strictTools: ReadonlySet<string>,
  /** Tools a runtime gate holds back this turn, with the reason (see `evaluatorGates`). */
  gates: ReadonlyMap<string, string> = new Map(),
): CallPlan {
  const byName = toolsByName(effective);
  // Strict-mode arguments carry nulls for omitted optional fields; the tool's own schema wants them absent.
  const withIds = calls.map((call) => {
    const tool = byName.get(call.name);
    const input =
      tool && strictTools.has(call.name)
        ? (dropStrictNulls(tool.inputSchema, call.input) as Record<string, unknown>)
        : call.input;
    return { ...call, input, id: newId("event") };
  });
  const batch = planBatch(
    withIds.map((call) => ({ id: call.id, name: call.name, input: call.input })),
    effective,
  );
  const plan: CallPlan = { batch, announce: [], rejected: [], planned: [], groups: [], pendingIds: [] };
  const runnable = new Map<string, RunnableCall>();
  const history = loopHistory(view);
  const finished = finishedCalls(view, history);

  for (const planned of batch.calls) {
    const call = withIds[planned.index];
    if (call === undefined) continue;
    const tool = byName.get(call.name);
    const next = loopCall(call.name, call.input);
    history.calls.set(call.id, next);
    const loop = checkLoop(finished, next, view.agent.loop_detection);
    if (loop.verdict === "stop") plan.stop ??= loop.message;
    // The environment's exec policy joins the tool's permission: its ask pauses, its deny rejects.
    const exec = tool && execApproval(view.environment?.spec.config ?? null, tool, call.input);
    const verdict = callVerdict({
      planned,
      tool,
      ...(call.inputError && { inputError: call.inputError.message }),
      exec: exec ?? { verdict: "allow", reason: "" },
      loop,
      ...(gates.has(call.name) && { gate: gates.get(call.name) }),
    });
    const announced = { id: call.id, name: call.name, input: call.input };
    const shown = exec?.evaluation && { exec: exec.evaluation };
    const clientProblem = verdict.kind === "client" ? clientUiCallProblem(call.name, call.input) : null;
    if (verdict.kind === "reject" || tool === undefined || clientProblem !== null) {
      plan.announce.push({ ...announced, type: "agent.tool_use", evaluated_permission: "deny", ...shown });
      const message =
        clientProblem ?? (verdict.kind === "reject" ? verdict.message : `unknown tool "${call.name}"`);
      plan.rejected.push({
        type: "agent.tool_result",
        tool_use_id: call.id,
        content: textContent(message),
        is_error: true,
      });
      continue;
    }
    if (verdict.kind === "client") {
      plan.announce.push({ ...announced, type: "agent.custom_tool_use" });
      plan.pendingIds.push(call.id);
      continue;
    }
    const permission = verdict.kind === "ask" ? "ask" : "allow";
    plan.announce.push(
      tool.ownership === "mcp"
        ? {
            ...announced,
            type: "agent.mcp_tool_use",
            mcp_server_name: tool.mcpServerName ?? "",
            evaluated_permission: permission,
          }
        : { ...announced, type: "agent.tool_use", evaluated_permission: permission, ...shown },
    );
    plan.planned.push({ ...announced, idempotent: tool.idempotent, status: "planned" });
    if (verdict.kind === "ask") plan.pendingIds.push(call.id);
    else runnable.set(call.id, { ...announced, tool, ...(verdict.note && { note: verdict.note }) });
  }
  if (plan.stop !== undefined) stopAll(plan, plan.stop, runnable);
  plan.groups = batch.groups
    .map((group) => group.flatMap((id) => runnable.get(id) ?? []))
    .filter((group) => group.length > 0);
  return plan;
}

const strictByTools = new WeakMap<readonly ModelToolSpec[], ReadonlySet<string>>();

/**
 * The tools a request sends in OpenAI strict mode. A wake sends the same tool list with every request
 * until its tool set changes, so each list is scanned once.
 */
export function strictToolNames(tools: readonly ModelToolSpec[]): ReadonlySet<string> {
  let names = strictByTools.get(tools);
  if (names === undefined) {
    names = new Set(tools.filter((tool) => tool.strict).map((tool) => tool.name));
    strictByTools.set(tools, names);
  }
  return names;
}

/** Loop detection ends the wake: nothing of the batch runs, and every call gets a result saying so. */
function stopAll(plan: CallPlan, message: string, runnable: Map<string, RunnableCall>): void {
  const unanswered = new Set(plan.announce.flatMap((event) => (event.id ? [event.id] : [])));
  const mcp = new Set(
    plan.announce.flatMap((event) => (event.type === "agent.mcp_tool_use" ? [event.id] : [])),
  );
  for (const result of plan.rejected)
    if (result.type === "agent.tool_result") unanswered.delete(result.tool_use_id);
  for (const id of unanswered) plan.rejected.push(resultEvent(mcp.has(id), id, textContent(message), true));
  plan.planned = plan.planned.filter((entry) => !unanswered.has(entry.id));
  plan.pendingIds = [];
  runnable.clear();
}

interface LoopHistory {
  /** Events of the view already folded in. */
  seen: number;
  /**
   * Announced calls by id, hashed as loop detection sees them. A call this wake planned is
   * kept from its planning (the announced input is the planned one), so its arguments are hashed once.
   */
  calls: Map<string, LoopCall>;
  records: LoopCallRecord[];
}
const loopHistories = new WeakMap<SessionView, LoopHistory>();

function loopHistory(view: SessionView): LoopHistory {
  let history = loopHistories.get(view);
  if (history === undefined) {
    history = { seen: 0, calls: new Map(), records: [] };
    loopHistories.set(view, history);
  }
  return history;
}

/**
 * The session's finished tool calls, oldest first, as loop detection reads them (invariant 6). Kept per
 * wake and extended with the events committed since the last step, so each call is hashed once.
 */
function finishedCalls(view: SessionView, history: LoopHistory): LoopCallRecord[] {
  const { events } = view;
  for (; history.seen < events.length; history.seen++) {
    const event = events[history.seen];
    if (event?.type === "agent.tool_use" || event?.type === "agent.mcp_tool_use") {
      if (!history.calls.has(event.id)) history.calls.set(event.id, loopCall(event.name, event.input));
    } else if (event?.type === "agent.tool_result" || event?.type === "agent.mcp_tool_result") {
      const id = event.type === "agent.tool_result" ? event.tool_use_id : event.mcp_tool_use_id;
      const call = history.calls.get(id);
      if (call) {
        history.records.push(finishedCall(call, { content: event.content, is_error: event.is_error }));
      }
    }
  }
  return history.records;
}
