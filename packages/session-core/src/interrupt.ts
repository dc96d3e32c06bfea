import type { SessionState } from "@wakeloop/contracts";

/** The `is_error` result of a call an interrupt stopped before it ran, whoever writes it. */
export const INTERRUPTED_BEFORE_RUN =
  "The user interrupted the session before this call ran; it did not run.";

/**
 * Calls that have not run and, once the user interrupts, never may: the ones waiting on an answer,
 * answered and waiting for a wake, or already stopped by the interrupt. Whoever ends the interrupted
 * turn writes an `is_error` result for each (orchestrator for an idle session, the worker otherwise).
 */
export function unrunCallIds(state: SessionState): string[] {
  const ids = [
    ...state.pending_actions.map((action) => action.event_id),
    ...state.confirmed_call_ids,
    ...state.interrupted_call_ids,
  ];
  return ids.filter((id, index) => ids.indexOf(id) === index);
}
