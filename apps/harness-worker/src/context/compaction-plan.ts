import type { ContextManagement } from "@wakeloop/contracts";
import {
  type ClearedResult,
  type CompactionPayload,
  type ConversationEvent,
  clearedStub,
  estimateTokens,
} from "./assemble-context";

/** What a compaction will do, before any model is asked: clear older results, or summarise older turns. */
export type CompactionPlan =
  | { strategy: "clear_tool_results"; fromSeq: number; toSeq: number; cleared: ClearedResult[] }
  | {
      strategy: "summary";
      fromSeq: number;
      toSeq: number;
      /** The events the summary stands for (after any earlier summary, which it folds in). */
      summarised: readonly ConversationEvent[];
    };

export interface CompactionInputs {
  /** The conversation after the last summary, oldest first (`History.compactable`). */
  events: readonly ConversationEvent[];
  /** Results already cleared by an earlier compaction. */
  cleared: ReadonlySet<string>;
  /** The first seq a new compaction replaces: after the last summary's range. */
  fromSeq: number;
  /** The next request's estimate (system prompt, tool schemas, history). */
  requestTokens: number;
}

/**
 * Whether the next request must be compacted first, and how (docs/context-management.md). Pure: the
 * same history and settings always give the same plan, so a wake re-run after a crash plans again what
 * the lost one planned. Past `threshold_tokens`, the history up to a cut is compacted and the newest
 * `keep_recent_tokens` after it kept. The cut falls between whole turns: after it, no call waits for a
 * result, so no tool call is ever apart from its result. The cheaper tier clears that older history's
 * tool results (stubs saying what each was) when that alone brings the request under the threshold;
 * otherwise it is summarised. Null: under the threshold, or nothing older than the newest turn to compact.
 */
export function planCompaction(settings: ContextManagement, input: CompactionInputs): CompactionPlan | null {
  if (input.requestTokens <= settings.threshold_tokens) return null;
  const cut = chooseCut(input.events, settings.keep_recent_tokens);
  if (cut === null) return null;
  const older = input.events.slice(0, cut + 1);
  const toSeq = older.at(-1)?.seq ?? 0;
  if (settings.clear_tool_results) {
    let saved = 0;
    const cleared: ClearedResult[] = [];
    const names = new Map<string, string>();
    for (const event of older) {
      const call = callOf(event);
      if (call !== null) names.set(call.id, call.name);
      const result = resultOf(event);
      if (result === null || input.cleared.has(result.id)) continue;
      const entry = {
        tool_use_id: result.id,
        name: names.get(result.id) ?? "a tool",
        chars: textLength(event),
      };
      const stubTokens = estimateTokens(clearedStub(entry));
      const tokens = eventTokens(event);
      if (tokens <= stubTokens) continue;
      saved += tokens - stubTokens;
      cleared.push(entry);
    }
    if (cleared.length > 0 && input.requestTokens - saved <= settings.threshold_tokens)
      return { strategy: "clear_tool_results", fromSeq: input.fromSeq, toSeq, cleared };
  }
  return { strategy: "summary", fromSeq: input.fromSeq, toSeq, summarised: older };
}

/**
 * The index of the last event to compact: the earliest turn boundary whose tail fits `keepTokens`, or
 * the latest boundary when none does. At least one event stays after it (the request needs its newest
 * turn); null when no boundary leaves one.
 */
export function chooseCut(events: readonly ConversationEvent[], keepTokens: number): number | null {
  const boundaries: number[] = [];
  const open = new Set<string>();
  for (const [index, event] of events.entries()) {
    const call = callOf(event);
    if (call !== null) open.add(call.id);
    const result = resultOf(event);
    if (result !== null) open.delete(result.id);
    if (open.size === 0 && index < events.length - 1) boundaries.push(index);
  }
  if (boundaries.length === 0) return null;
  // Tokens after each index, newest first: the tail a cut there keeps.
  const tail: number[] = new Array(events.length).fill(0);
  let sum = 0;
  for (let index = events.length - 1; index >= 0; index--) {
    tail[index] = sum;
    sum += eventTokens(events[index] as ConversationEvent);
  }
  return boundaries.find((index) => (tail[index] ?? 0) <= keepTokens) ?? (boundaries.at(-1) as number);
}

/** The compaction event a plan and, for a summary, its text make. */
export function compactionEvent(
  plan: CompactionPlan,
  summary: { text: string; model: string } | null,
  tokens: { before: number; after: number },
): CompactionPayload {
  return {
    type: "session.compaction",
    strategy: plan.strategy,
    summary: summary?.text ?? null,
    replaces: { from_seq: plan.fromSeq, to_seq: plan.toSeq },
    cleared_tool_results: plan.strategy === "clear_tool_results" ? plan.cleared : [],
    tokens_before: tokens.before,
    tokens_after: tokens.after,
    model: summary?.model ?? null,
  };
}

/** About what an event adds to a request: its content, or a call's name and input. */
function eventTokens(event: ConversationEvent): number {
  switch (event.type) {
    case "agent.tool_use":
    case "agent.mcp_tool_use":
    case "agent.custom_tool_use":
      return estimateTokens({ name: event.name, input: event.input });
    case "user.define_outcome":
      return estimateTokens({ description: event.description, criteria: event.criteria });
    default:
      return estimateTokens(event.content);
  }
}

function callOf(event: ConversationEvent): { id: string; name: string } | null {
  switch (event.type) {
    case "agent.tool_use":
    case "agent.mcp_tool_use":
    case "agent.custom_tool_use":
      return { id: event.id, name: event.name };
    default:
      return null;
  }
}

function resultOf(event: ConversationEvent): { id: string } | null {
  switch (event.type) {
    case "agent.tool_result":
      return { id: event.tool_use_id };
    case "agent.mcp_tool_result":
      return { id: event.mcp_tool_use_id };
    case "user.custom_tool_result":
      return { id: event.custom_tool_use_id };
    default:
      return null;
  }
}

function textLength(event: ConversationEvent): number {
  if (!("content" in event)) return 0;
  return event.content.reduce((sum, block) => sum + (block.type === "text" ? block.text.length : 0), 0);
}
