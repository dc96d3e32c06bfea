import {
  type Budget,
  type EventPayload,
  type Metadata,
  type PendingAction,
  type SessionState,
  ZERO_USAGE,
} from "@wakeloop/contracts";
import { outcomeTitle } from "./outcome";

export interface SessionInit {
  title: string | null;
  metadata: Metadata;
  budget: Budget;
}

export function initialSessionState(init: SessionInit): SessionState {
  return {
    version: 1,
    status: "idle",
    stop_reason: null,
    termination_reason: null,
    title: init.title,
    metadata: init.metadata,
    usage: ZERO_USAGE,
    cost_micro_usd: 0,
    budget: init.budget,
    last_seq: 0,
    unprocessed_message_ids: [],
    pending_actions: [],
    answered_action_ids: [],
    confirmed_call_ids: [],
    interrupted_call_ids: [],
    interrupt_requested: false,
    sandbox_status: null,
    child_session_ids: [],
    delegated_tokens: 0,
    defined_outcome: null,
    mcp_servers: [],
    revealed_tools: [],
  };
}

/** The event fields the reducer reads: the payload plus its id and seq. */
export type ReducibleEvent = EventPayload & { id: string; seq: number };

/**
 * The session projection as a pure fold over its events (invariant 2). No clock, no I/O: replaying a
 * session's events from `initialSessionState` reproduces the stored state byte for byte, so every
 * field is written in a fixed key order and arrays keep event order.
 */
export function reduceSessionState(state: SessionState, event: ReducibleEvent): SessionState {
  const next: SessionState = { ...state, last_seq: event.seq };
  // Termination is final: a wake that was still running when the session ended cannot revive it.
  if (state.status === "terminated" && event.type.startsWith("session.status_")) return next;
  switch (event.type) {
    case "user.message":
      return { ...next, unprocessed_message_ids: [...state.unprocessed_message_ids, event.id] };
    case "user.interrupt":
      return interrupt(next);
    case "user.tool_confirmation":
      return confirm(next, event.tool_use_id);
    case "user.custom_tool_result":
      return answer(next, event.custom_tool_use_id);
    case "user.define_outcome":
      // A person's outcome is input like a message: it wakes the session and the model reads it.
      return {
        ...next,
        unprocessed_message_ids: [...state.unprocessed_message_ids, event.id],
        defined_outcome: {
          event_id: event.id,
          title: outcomeTitle(event.description),
          criteria: event.criteria ?? [],
        },
      };
    case "agent.tool_use": {
      // A call the plan refused (unknown tool, denied) reveals nothing.
      const used = event.evaluated_permission === "deny" ? next : reveal(next, [event.name]);
      return event.evaluated_permission === "ask"
        ? ask(used, {
            event_id: event.id,
            kind: "tool_confirmation",
            name: event.name,
            input: event.input,
            ...(event.exec && { exec: event.exec }),
          })
        : used;
    }
    case "agent.mcp_tool_use": {
      const used = event.evaluated_permission === "deny" ? next : reveal(next, [event.name]);
      return event.evaluated_permission === "ask"
        ? ask(used, { event_id: event.id, kind: "tool_confirmation", name: event.name, input: event.input })
        : used;
    }
    case "agent.custom_tool_use":
      return ask(next, {
        event_id: event.id,
        kind: "custom_tool_result",
        name: event.name,
        input: event.input,
      });
    case "agent.tool_result":
      return settle(reveal(next, event.revealed_tools ?? []), event.tool_use_id);
    case "agent.mcp_tool_result":
      return settle(next, event.mcp_tool_use_id);
    case "mcp.tools_listed":
      return { ...next, mcp_servers: event.servers };
    case "agent.message":
    case "agent.thinking":
    case "span.model_request_end":
      return next;
    case "span.model_request_start":
      // The model request that follows sees every message and answer committed before it.
      return { ...next, unprocessed_message_ids: [], answered_action_ids: [] };
    case "session.status_running":
      return { ...next, status: "running", stop_reason: null };
    case "session.status_idle":
      return { ...next, status: "idle", stop_reason: event.stop_reason, interrupt_requested: false };
    case "session.status_rescheduled":
      return { ...next, status: "rescheduling" };
    case "session.status_terminated":
      return {
        ...next,
        status: "terminated",
        termination_reason: event.reason,
        pending_actions: [],
        answered_action_ids: [],
        confirmed_call_ids: [],
        interrupted_call_ids: [],
      };
    case "session.error":
      return next;
    case "session.usage":
      // An event from before costs were kept leaves the cost unknown rather than claiming none.
      return {
        ...next,
        usage: event.usage,
        cost_micro_usd: event.cost?.session_micro_usd ?? null,
        budget: event.budget,
      };
    case "session.updated":
      return {
        ...next,
        title: event.title === undefined ? state.title : event.title,
        metadata: event.metadata ?? state.metadata,
        budget: event.budget ?? state.budget,
      };
    case "session.child_created":
      return {
        ...next,
        child_session_ids: [...state.child_session_ids, event.child_session_id],
        delegated_tokens: state.delegated_tokens + (event.token_budget ?? 0),
      };
    case "session.child_completed":
      // The child's spending replaces the budget held for it: the unspent rest comes back.
      return {
        ...next,
        delegated_tokens: Math.max(
          0,
          state.delegated_tokens + (event.tokens_used ?? 0) - (event.token_budget ?? 0),
        ),
      };
    case "session.child_requires_action":
    case "session.wake_queued":
    case "agent.ui_message":
    case "agent.ui_blocks":
    case "session.memory_recalled":
    // What a request carries changes, not the session's state: the harness reads it from the history.
    case "session.compaction":
      return next;
    case "sandbox.status":
      return { ...next, sandbox_status: event.status };
    default:
      return assertNever(event);
  }
}

function ask(state: SessionState, action: PendingAction): SessionState {
  return { ...state, pending_actions: [...state.pending_actions, action] };
}

/** An answer for an action the session waits on; answers for anything else change nothing. */
function answer(state: SessionState, id: string): SessionState {
  if (!state.pending_actions.some((action) => action.event_id === id)) return state;
  return {
    ...state,
    pending_actions: state.pending_actions.filter((action) => action.event_id !== id),
    answered_action_ids: [...state.answered_action_ids, id],
  };
}

/** A person's answer to a tool call: the call waits for the next wake to run (allow) or refuse it (deny). */
function confirm(state: SessionState, id: string): SessionState {
  const answered = answer(state, id);
  if (answered === state) return state;
  return { ...answered, confirmed_call_ids: [...state.confirmed_call_ids, id] };
}

/**
 * The user stops the turn. Every call that has not run yet — still pending, or answered and waiting
 * for a wake — is stopped here, in the fold, so no later answer, wake or replay can run it: it moves to
 * `interrupted_call_ids` until its error result is written, and answers consumed by no wake are
 * dropped, so they no longer ask for one. A custom tool's answer is its result already; it stays in the
 * history for the next turn and needs nothing more.
 */
function interrupt(state: SessionState): SessionState {
  const stopped = [...state.pending_actions.map((action) => action.event_id), ...state.confirmed_call_ids];
  return {
    ...state,
    pending_actions: [],
    answered_action_ids: [],
    confirmed_call_ids: [],
    interrupted_call_ids: [
      ...state.interrupted_call_ids,
      ...stopped.filter((id) => !state.interrupted_call_ids.includes(id)),
    ],
    interrupt_requested: true,
  };
}

/** A result settles a call: it is neither pending, nor waiting to be consumed or run any more. */
function settle(state: SessionState, id: string): SessionState {
  const without = (ids: string[]) => ids.filter((other) => other !== id);
  return {
    ...state,
    pending_actions: state.pending_actions.filter((action) => action.event_id !== id),
    answered_action_ids: without(state.answered_action_ids),
    confirmed_call_ids: without(state.confirmed_call_ids),
    interrupted_call_ids: without(state.interrupted_call_ids),
  };
}

function assertNever(value: never): never {
  throw new Error(`unhandled event type ${JSON.stringify(value)}`);
}

/**
 * Tools that join the request's offered tools (docs/tool-search.md), appended in order once each: only
 * appending keeps the request's earlier bytes a cacheable prefix. Names of tools the session may not
 * call are kept too; the offer filters them through the effective tools of each turn.
 */
function reveal(state: SessionState, names: readonly string[]): SessionState {
  const fresh = names.filter(
    (name, index) => !state.revealed_tools.includes(name) && names.indexOf(name) === index,
  );
  return fresh.length === 0 ? state : { ...state, revealed_tools: [...state.revealed_tools, ...fresh] };
}
