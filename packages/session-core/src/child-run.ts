import type { ChildSessionStatus, SessionState } from "@wakeloop/contracts";
import { childEnding } from "./child-ending";
import { wakeReason } from "./wake-decision";

/**
 * How a `session_run_child` run ended for the parent: how the sub-session finished, `requires_action`
 * (it waits on a person), `out_of_cycles` (it used the run's model requests and had more to do) or
 * `idle` (its turn ended).
 */
export type ChildRunStatus = ChildSessionStatus | "idle" | "requires_action" | "out_of_cycles";

/** The sub-session's model requests since the run began. */
export interface ChildRunProgress {
  used: number;
  max: number;
  /** Its last model response made calls whose results no request has read yet. */
  cutOff: boolean;
}

/**
 * Whether a run of a sub-session is over, and how; null while it is still going (running, or idle with
 * input that wakes it again within the run's requests). Pure.
 */
export function childRunStatus(state: SessionState, progress: ChildRunProgress): ChildRunStatus | null {
  const ended = childEnding(state);
  if (ended !== null) return ended;
  if (state.status !== "idle") return null;
  if (state.pending_actions.length > 0) return "requires_action";
  const more = wakeReason(state) !== null;
  if (progress.used >= progress.max && (progress.cutOff || more)) return "out_of_cycles";
  return more ? null : "idle";
}
