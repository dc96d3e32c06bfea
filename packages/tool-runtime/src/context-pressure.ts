/**
 * How full a session's context is, and what to do about it (openboa `session_describe_context`):
 * the budget split into system prompt, tool schemas and history, with a pressure level, its reasons
 * and the narrower reread tools to reach for instead of widening the context. Pure: token estimates in.
 */

export interface ContextBudgetInputs {
  contextWindowTokens: number;
  /** Room kept for the answer. */
  maxOutputTokens: number;
  systemTokens: number;
  toolSchemaTokens: number;
  /** The whole history, and the part of it the next request carries. */
  historyTokens: number;
  selectedHistoryTokens: number;
  /** Tools the session can call: recommendations name only these. */
  availableTools: readonly string[];
}

export type PressureLevel = "low" | "elevated" | "high";

export interface ContextBudget {
  context_window_tokens: number;
  reserved_output_tokens: number;
  system_tokens: number;
  tool_schema_tokens: number;
  history_tokens: number;
  history_selected_tokens: number;
  history_dropped_tokens: number;
  /** Share of the input budget (window minus output room) the next request fills, 0..1+. */
  utilization: number;
  pressure: { level: PressureLevel; reasons: string[]; recommended_tools: string[] };
}

export const ELEVATED_UTILIZATION = 0.6;
export const HIGH_UTILIZATION = 0.85;
/** Tool schemas past this share of the input budget crowd out history. */
export const HEAVY_TOOL_SCHEMAS = 0.25;

/** Bounded rereads first, then the searches, in the order worth trying. */
const REREAD_TOOLS = [
  "session_get_snapshot",
  "retrieval_search",
  "session_search_context",
  "session_get_events",
  "session_get_trace",
] as const;

export function describeContextBudget(input: ContextBudgetInputs): ContextBudget {
  const inputBudget = Math.max(1, input.contextWindowTokens - input.maxOutputTokens);
  const used = input.systemTokens + input.toolSchemaTokens + input.selectedHistoryTokens;
  const utilization = Math.round((used / inputBudget) * 100) / 100;
  const dropped = Math.max(0, input.historyTokens - input.selectedHistoryTokens);

  const reasons: string[] = [];
  let level: PressureLevel = "low";
  const raise = (to: PressureLevel) => {
    if (to === "high" || (to === "elevated" && level === "low")) level = to;
  };
  if (dropped > 0) {
    raise("high");
    reasons.push(`${dropped} tokens of older history no longer fit and are left out of requests`);
  }
  if (utilization >= HIGH_UTILIZATION) {
    raise("high");
    reasons.push(`the next request fills ${Math.round(utilization * 100)}% of the input budget`);
  } else if (utilization >= ELEVATED_UTILIZATION) {
    raise("elevated");
    reasons.push(`the next request fills ${Math.round(utilization * 100)}% of the input budget`);
  }
  if (input.toolSchemaTokens / inputBudget >= HEAVY_TOOL_SCHEMAS) {
    raise("elevated");
    reasons.push(`tool schemas take ${input.toolSchemaTokens} tokens`);
  }
  const available = new Set(input.availableTools);
  return {
    context_window_tokens: input.contextWindowTokens,
    reserved_output_tokens: input.maxOutputTokens,
    system_tokens: input.systemTokens,
    tool_schema_tokens: input.toolSchemaTokens,
    history_tokens: input.historyTokens,
    history_selected_tokens: input.selectedHistoryTokens,
    history_dropped_tokens: dropped,
    utilization,
    pressure: {
      level,
      reasons,
      recommended_tools: level === "low" ? [] : REREAD_TOOLS.filter((name) => available.has(name)),
    },
  };
}
