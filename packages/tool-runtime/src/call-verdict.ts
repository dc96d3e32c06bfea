import type { PlannedCall } from "./batch-planner";
import type { EffectiveTool } from "./effective-tool-set";
import type { LoopVerdict } from "./loop-detection";

/** What is known of one model call when it is planned: every check that can hold it back. */
export interface CallFacts {
  /** The batch planner's entry for the call. */
  planned: PlannedCall;
  /** The effective tool of that name, if there is one. */
  tool: EffectiveTool | undefined;
  /** Why the model's arguments could not be read as a JSON object, if they could not. */
  inputError?: string;
  /** The environment's exec policy for the call (`allow` when it runs no command). */
  exec: { verdict: "allow" | "ask" | "deny"; reason: string };
  loop: LoopVerdict;
  /** Why a runtime gate holds the tool back now (the evaluator gate on shared writes), if one does. */
  gate?: string;
}

/**
 * The call's fate: rejected with an error result for the model, handed to the client, paused for a
 * person's approval, or run. Checks apply in order of what the model can fix: unreadable arguments,
 * the planner's rejection, an unknown tool, the exec policy's deny, loop detection, then a runtime gate
 * (so a person is never asked to approve a call the gate would refuse).
 */
export type CallVerdict =
  | { kind: "reject"; message: string }
  | { kind: "client" }
  | { kind: "ask"; note?: string }
  | { kind: "run"; note?: string };

export function callVerdict(facts: CallFacts): CallVerdict {
  const { planned, tool, exec, loop } = facts;
  if (facts.inputError !== undefined) {
    return {
      kind: "reject",
      message: `the arguments for ${planned.name} were not a JSON object (${facts.inputError}); call the tool again with valid JSON`,
    };
  }
  if (planned.status === "rejected") return { kind: "reject", message: planned.error.message };
  if (tool === undefined) return { kind: "reject", message: `unknown tool "${planned.name}"` };
  if (exec.verdict === "deny") return { kind: "reject", message: `The command was not run: ${exec.reason}.` };
  if (loop.verdict === "block" || loop.verdict === "stop") return { kind: "reject", message: loop.message };
  if (facts.gate !== undefined) return { kind: "reject", message: facts.gate };
  if (tool.executor === "client") return { kind: "client" };
  const note = loop.verdict === "warn" ? { note: loop.message } : {};
  if (tool.permissionPolicy === "always_ask" || exec.verdict === "ask") return { kind: "ask", ...note };
  return { kind: "run", ...note };
}
