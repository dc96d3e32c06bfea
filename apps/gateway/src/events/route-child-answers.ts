import type { PendingAction, SessionState, UserEventInput } from "@wakeloop/contracts";

/** A sub-session (at any depth) below the session a batch is posted to, with its locked state. */
export interface Descendant {
  sessionId: string;
  state: SessionState;
}

/**
 * Splits a batch posted to a parent between the parent and its sub-sessions: a `user.tool_confirmation`
 * whose call is not pending on the parent but awaits confirmation on one of its sub-sessions is that
 * sub-session's answer, so one person answers a child's approval from the parent. Everything else stays
 * the parent's and is checked there as before. The answer is appended to the child, for that exact
 * call, and the child's own wake runs the call only once it reads that allow (invariant 4). Pure.
 */
export function routeChildAnswers(
  parent: SessionState,
  descendants: readonly Descendant[],
  events: readonly UserEventInput[],
): { own: UserEventInput[]; children: Map<string, UserEventInput[]> } {
  const own: UserEventInput[] = [];
  const children = new Map<string, UserEventInput[]>();
  for (const event of events) {
    const owner =
      event.type === "user.tool_confirmation" && !isPending(parent.pending_actions, event.tool_use_id)
        ? descendants.find((child) => isPending(child.state.pending_actions, event.tool_use_id))
        : undefined;
    if (owner === undefined || owner.state.status === "terminated") own.push(event);
    else children.set(owner.sessionId, [...(children.get(owner.sessionId) ?? []), event]);
  }
  return { own, children };
}

function isPending(actions: readonly PendingAction[], id: string): boolean {
  return actions.some((action) => action.event_id === id && action.kind === "tool_confirmation");
}
