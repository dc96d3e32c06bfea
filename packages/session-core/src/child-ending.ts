import type { ChildSessionStatus, SessionState } from "@wakeloop/contracts";

/**
 * Whether a sub-session has finished for its parent, and how: it ended (reported its result, failed or
 * was archived), or it stopped where it cannot go on by itself (budget spent, retries exhausted). Idle
 * after a turn or waiting on a person is not finished: the parent keeps waiting. Pure.
 */
export function childEnding(state: SessionState): ChildSessionStatus | null {
  if (state.status === "terminated") return state.termination_reason ?? "error";
  if (state.status !== "idle") return null;
  const stop = state.stop_reason?.type;
  return stop === "budget_reached" || stop === "retries_exhausted" ? stop : null;
}
