import { stableHash } from "../stable-json";
import { stripVolatile } from "./volatile";

/** A tool call as loop detection sees it: name, hashed arguments, and whether it is a poll. */
export interface LoopCall {
  name: string;
  argsHash: string;
  poll: boolean;
}

/** A finished call: the hash of its result too (volatile fields stripped). */
export interface LoopCallRecord extends LoopCall {
  resultHash: string;
}

/**
 * Calls that only look at something that may change on its own (a running command, a background
 * process): repeating them is normal while the result changes, so they are judged by
 * poll-without-progress instead of generic repeat. `actions` narrows a tool to some `input.action`s.
 */
export interface PollCallRule {
  tool: string;
  actions?: readonly string[];
}

export const DEFAULT_POLL_CALLS: readonly PollCallRule[] = [
  { tool: "shell_wait" },
  { tool: "shell_read_last_output" },
  { tool: "shell_describe" },
  { tool: "shell_history" },
  { tool: "process", actions: ["poll", "list"] },
];

export function loopCall(name: string, input: unknown, pollCalls = DEFAULT_POLL_CALLS): LoopCall {
  return { name, argsHash: stableHash(stripVolatile(input)), poll: isPoll(name, input, pollCalls) };
}

export function loopCallRecord(
  name: string,
  input: unknown,
  result: unknown,
  pollCalls = DEFAULT_POLL_CALLS,
): LoopCallRecord {
  return finishedCall(loopCall(name, input, pollCalls), result);
}

/** The record of `call` once it returned `result`, for a caller that kept the call's `loopCall`. */
export function finishedCall(call: LoopCall, result: unknown): LoopCallRecord {
  return { ...call, resultHash: stableHash(stripVolatile(result)) };
}

export function sameCall(a: LoopCall, b: LoopCall): boolean {
  return a.name === b.name && a.argsHash === b.argsHash;
}

function isPoll(name: string, input: unknown, pollCalls: readonly PollCallRule[]): boolean {
  const action =
    input !== null && typeof input === "object" ? (input as Record<string, unknown>).action : undefined;
  return pollCalls.some(
    // An action that is not a string names no poll action (String() would throw on a null-prototype object).
    (rule) =>
      rule.tool === name &&
      (rule.actions === undefined || (typeof action === "string" && rule.actions.includes(action))),
  );
}
