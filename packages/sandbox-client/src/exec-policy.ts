import type { EnvironmentConfig, SandboxToolName } from "@wakeloop/contracts";
import { allowlistSatisfied, unmatchableProgram } from "./allowlist";
import { type ExecRequest, execRequestOf } from "./exec-request";
import { analyzeCommand } from "./shell-analysis";

// Exec security (deny | allowlist | full) × ask (off | on-miss | always), after OpenClaw's exec
// approvals: "on-miss" asks only when an allowlist is in force and the request is not on it. Pure, so
// the harness decides "ask" before a call runs (the session's requires_action) and the runner checks
// the same verdict again when the call arrives.

export type ExecPolicyConfig = Pick<EnvironmentConfig, "exec_security" | "exec_ask" | "exec_allowlist">;
export type ExecVerdict = "allow" | "ask" | "deny";

/** The policy's answer for one call, with what the approver is shown. */
export type ExecCheck = ExecRequest & {
  verdict: ExecVerdict;
  /** Why, in one sentence for the model or the approver. */
  reason: string;
};

/** Why the request is not on the allowlist, or null when it is. */
function allowlistMiss(allowlist: readonly string[], request: ExecRequest): string | null {
  if (request.sensitive.length > 0) {
    return `it sets ${request.sensitive.join(", ")}, which choose the code programs run`;
  }
  if (request.command === null || allowlistSatisfied(allowlist, request.command)) return null;
  const analysis = analyzeCommand(request.command);
  if (!analysis.ok) return `the command cannot be checked (${analysis.reason})`;
  const path = analysis.commands.map((simple) => unmatchableProgram(simple.program)).find((why) => why);
  return path
    ? `the command cannot be checked (${path})`
    : "the command is not on the environment's exec allowlist";
}

export function evaluateExecRequest(config: ExecPolicyConfig, request: ExecRequest): ExecCheck {
  const check = (verdict: ExecVerdict, reason: string): ExecCheck => ({ ...request, verdict, reason });
  switch (config.exec_security) {
    case "deny":
      return check("deny", "the environment's exec policy denies all commands (exec_security=deny)");
    case "full":
      return config.exec_ask === "always"
        ? check("ask", "the environment asks for approval of every command (exec_ask=always)")
        : check("allow", "allowed by the environment's exec policy");
    case "allowlist": {
      const miss = allowlistMiss(config.exec_allowlist, request);
      if (miss === null) {
        return config.exec_ask === "always"
          ? check("ask", "the environment asks for approval of every command (exec_ask=always)")
          : check("allow", "allowed by the environment's exec policy");
      }
      return config.exec_ask === "off"
        ? check("deny", `${miss} and exec_ask=off, so it is denied`)
        : check("ask", `${miss}; it needs approval (exec_ask=on-miss)`);
    }
  }
}

/** The verdict for a bare command line. */
export function evaluateExecPolicy(config: ExecPolicyConfig, command: string): ExecVerdict {
  return evaluateExecRequest(config, { command, env: {}, sensitive: [] }).verdict;
}

/**
 * The one check both sides run: the harness at plan time, the runner when the call arrives. Null when
 * the call runs nothing the policy governs (file tools, harmless variables).
 */
export function checkExec(config: ExecPolicyConfig, tool: SandboxToolName, input: unknown): ExecCheck | null {
  const request = execRequestOf(tool, input);
  return request === null ? null : evaluateExecRequest(config, request);
}
