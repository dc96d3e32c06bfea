import { type ExecEvaluation, SandboxToolName } from "@wakeloop/contracts";
import { checkExec, type ExecPolicyConfig, type ExecVerdict } from "@wakeloop/sandbox-client";
import type { EffectiveTool } from "@wakeloop/tool-runtime";

export interface ExecApproval {
  verdict: ExecVerdict;
  /** Why, in one sentence for the model or the approver. */
  reason: string;
  /** What the approver is shown: the command and the variables it runs with. Absent when no command. */
  evaluation?: ExecEvaluation;
}

const NO_COMMAND: ExecApproval = { verdict: "allow", reason: "the call runs no command" };

/**
 * The environment's exec policy for one call, decided at plan time (DESIGN §6): an "ask" becomes the
 * session's `requires_action` pause before anything runs, and a "deny" an error result for the model.
 * The runner checks the same verdict again when the call arrives (`checkExec` on both sides), so the
 * two can only agree.
 */
export function execApproval(
  environment: ExecPolicyConfig | null,
  tool: Pick<EffectiveTool, "name" | "executor">,
  input: unknown,
): ExecApproval {
  if (environment === null || tool.executor !== "sandbox") return NO_COMMAND;
  const name = SandboxToolName.safeParse(tool.name);
  if (!name.success) return NO_COMMAND;
  const check = checkExec(environment, name.data, input);
  if (check === null) return NO_COMMAND;
  return {
    verdict: check.verdict,
    reason: check.reason,
    evaluation: { command: check.command, env: check.env, reason: check.reason },
  };
}
