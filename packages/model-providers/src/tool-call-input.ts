import { exceedsJsonDepth, jsonDepthMessage } from "@wakeloop/contracts";
import type { ModelToolCall } from "./model-client";

/**
 * Reads a tool call's arguments text. Models sometimes send malformed JSON or a non-object; that is
 * reported on the call (the harness answers it with an `is_error` result) rather than thrown, so one
 * bad call never fails the whole model turn. Arguments nested past MAX_JSON_DEPTH are reported the same way.
 */
export function parseToolCallInput(raw: string): Pick<ModelToolCall, "input" | "inputError"> {
  // No argument text at all is how both protocols express a call without parameters.
  if (raw.trim() === "") return { input: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { input: {}, inputError: { message: `tool arguments are not valid JSON: ${reason}`, raw } };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`;
    return { input: {}, inputError: { message: `tool arguments must be a JSON object, got ${kind}`, raw } };
  }
  // Nothing downstream (the text repair, the policy pipeline, the executors, jsonb) walks deeper input.
  if (exceedsJsonDepth(parsed))
    return { input: {}, inputError: { message: jsonDepthMessage("the tool arguments"), raw } };
  return { input: parsed as Record<string, unknown> };
}
