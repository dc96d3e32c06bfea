import { z } from "zod";
import { Id } from "./ids";

// ---- live deltas ------------------------------------------------------------------------------
//
// What the model writes while it writes it: pieces of text and of tool-call arguments, forwarded from
// the worker to event streams that ask for them (`?deltas=true`). Deltas are ephemeral: never stored,
// no `seq`, no SSE `id:`, so `Last-Event-ID` only ever names a stored event. They are a preview; the
// stored `agent.message` / `agent.tool_use` events of the request (committed with its
// `span.model_request_end`) are the answer. A client that reconnects, or misses deltas (a slow reader's
// are dropped), loses nothing stored. Kept apart from `SessionEvent`, so consumers of stored events
// never see them.

const DeltaFields = {
  /** Marks the event as never stored: it has no `seq` and cannot be resumed from. */
  ephemeral: z.literal(true),
  session_id: Id,
  wake_id: Id,
  /** The stored `span.model_request_start` of the request writing this; its `span.model_request_end` ends the deltas. */
  model_request_start_id: Id,
  /** The request's attempt, from 1: a retried request streams again from nothing, so a higher one restarts the preview. */
  attempt: z.number().int().positive(),
  /** The part's position in the answer as the provider numbers it; with `type`, it names one part of one attempt. */
  index: z.number().int().nonnegative(),
};

/** More text of the answer; a part's deltas, joined in order, are its text. */
export const AgentMessageDelta = z.object({
  type: z.literal("agent.message_delta"),
  ...DeltaFields,
  text: z.string(),
});
export type AgentMessageDelta = z.infer<typeof AgentMessageDelta>;

/** More of a tool call's JSON arguments; complete (and validated) only in the stored `agent.tool_use`. */
export const AgentToolUseInputDelta = z.object({
  type: z.literal("agent.tool_use_input_delta"),
  ...DeltaFields,
  /** The provider's id of the call (not yet the stored event's id). */
  tool_call_id: z.string(),
  name: z.string(),
  partial_json: z.string(),
});
export type AgentToolUseInputDelta = z.infer<typeof AgentToolUseInputDelta>;

export const StreamDelta = z.discriminatedUnion("type", [AgentMessageDelta, AgentToolUseInputDelta]);
export type StreamDelta = z.infer<typeof StreamDelta>;
