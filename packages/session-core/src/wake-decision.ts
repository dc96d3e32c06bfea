import type { SessionState, WakeReason } from "@wakeloop/contracts";

export function totalTokens(state: Pick<SessionState, "usage">): number {
  return state.usage.input_tokens + state.usage.output_tokens;
}

/** Tokens counted against the session's budget: its own and those it gave its sub-sessions. */
export function chargedTokens(state: Pick<SessionState, "usage" | "delegated_tokens">): number {
  return state.usage.input_tokens + state.usage.output_tokens + state.delegated_tokens;
}

/** Either limit of the budget reached: its tokens, or its money (when the session's cost is known). */
export function budgetExhausted(state: SessionState): boolean {
  const { max_total_tokens: maxTokens, max_cost_micro_usd: maxCost } = state.budget;
  if (maxTokens !== null && chargedTokens(state) >= maxTokens) return true;
  return maxCost != null && state.cost_micro_usd !== null && state.cost_micro_usd >= maxCost;
}

/**
 * Whether a session with no open wake has work, and why. Pure: the orchestrator calls it after every
 * committed event and the sweeper calls it for sessions it recovers.
 */
export function wakeReason(state: SessionState): WakeReason | null {
  if (state.status === "terminated" || state.status === "running") return null;
  // A session that waits on a person or client stays put until every blocking id is answered.
  if (state.pending_actions.length > 0) return null;
  if (budgetExhausted(state)) return null;
  if (state.answered_action_ids.length > 0) return "tool_confirmation";
  if (state.unprocessed_message_ids.length > 0) return "user_message";
  if (state.stop_reason?.type === "budget_reached") return "budget_raised";
  return null;
}
