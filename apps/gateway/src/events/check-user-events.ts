import {
  type PendingAction,
  type SessionState,
  type UserEventInput,
  WakeloopError,
} from "@wakeloop/contracts";
import { sessionTerminated } from "../sessions/session-lock";

/**
 * Checks a batch against the session it is posted to, before anything is written. A terminated
 * session takes no more events (409). An answer must name an action the session waits on, of the
 * matching kind (a confirmation answers an `agent.tool_use` awaiting confirmation, a custom tool result
 * an `agent.custom_tool_use`), and only once: an id answered earlier in the same batch is no longer
 * pending (400). Pure, so the route and its unit tests share it.
 */
export function checkUserEvents(state: SessionState, events: readonly UserEventInput[]): void {
  if (state.status === "terminated") throw sessionTerminated(state);
  let pending: readonly PendingAction[] = state.pending_actions;
  for (const [index, event] of events.entries()) {
    if (event.type === "user.tool_confirmation") {
      pending = answer(pending, index, event.tool_use_id, "tool_confirmation");
    } else if (event.type === "user.custom_tool_result") {
      pending = answer(pending, index, event.custom_tool_use_id, "custom_tool_result");
    }
  }
}

const ANSWERED_BY = {
  tool_confirmation: {
    event: "user.tool_confirmation",
    field: "tool_use_id",
    asks: "an agent.tool_use awaiting confirmation",
  },
  custom_tool_result: {
    event: "user.custom_tool_result",
    field: "custom_tool_use_id",
    asks: "an agent.custom_tool_use awaiting its result",
  },
} as const;

function answer(
  pending: readonly PendingAction[],
  index: number,
  id: string,
  kind: PendingAction["kind"],
): readonly PendingAction[] {
  const action = pending.find((candidate) => candidate.event_id === id);
  if (action === undefined || action.kind !== kind) {
    const { event, field, asks } = ANSWERED_BY[kind];
    const waitingOn = pending
      .filter((candidate) => candidate.kind === kind)
      .map((candidate) => candidate.event_id);
    const hint = action === undefined ? "" : ` (it awaits a ${ANSWERED_BY[action.kind].event} instead)`;
    throw new WakeloopError(
      "action_not_pending",
      `events[${index}]: ${event} ${field} ${id} does not name ${asks}${hint}`,
      {
        details: { index, [field]: id, pending_ids: waitingOn },
      },
    );
  }
  return pending.filter((candidate) => candidate !== action);
}
