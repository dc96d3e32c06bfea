import { RunSandboxCodeInput, type SandboxToolName, sandboxCodeArgv } from "@wakeloop/contracts";
import { sensitiveEnvNames } from "./sensitive-env";

/**
 * What a call asks the sandbox to run, as the exec policy and the approver see it: the command line
 * (null when the call runs none) and the variables the call sets for it. `sensitive` names the ones
 * among them that choose code (sensitive-env.ts); they make the call an exec request even without a
 * command.
 */
export type ExecRequest = { command: string | null; env: Record<string, string>; sensitive: string[] };

const COMMAND_ACTIONS = new Set(["run_command", "run_shell", "exec_persistent_shell"]);

function field<T>(value: unknown, name: string, is: (x: unknown) => x is T): T | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const found = (value as Record<string, unknown>)[name];
  return is(found) ? found : undefined;
}
const isString = (x: unknown): x is string => typeof x === "string";
const isEnv = (x: unknown): x is Record<string, string> =>
  typeof x === "object" && x !== null && Object.values(x).every(isString);

function request(command: string | null, env: Record<string, string> = {}): ExecRequest | null {
  const sensitive = sensitiveEnvNames(env);
  if (command === null && sensitive.length === 0) return null;
  return { command, env, sensitive };
}

function commandRequest(input: unknown): ExecRequest | null {
  const command = field(input, "command", isString);
  return command === undefined ? null : request(command, field(input, "env", isEnv));
}

/** The exec request of one sandbox tool call; null when the call runs nothing the policy governs. */
export function execRequestOf(tool: SandboxToolName, input: unknown): ExecRequest | null {
  switch (tool) {
    case "bash":
    case "shell_run":
    case "shell_exec":
      return commandRequest(input);
    case "shell_set_env": {
      const name = field(input, "name", isString);
      const value = field(input, "value", isString);
      return name === undefined || value === undefined ? null : request(null, { [name]: value });
    }
    case "sandbox_execute": {
      const action = field(input, "action", isString);
      return action !== undefined && COMMAND_ACTIONS.has(action)
        ? commandRequest(field(input, "args", (x): x is unknown => true))
        : null;
    }
    case "run_sandbox_code": {
      const code = RunSandboxCodeInput.safeParse(input);
      return code.success ? request(commandLine(sandboxCodeArgv(code.data))) : null;
    }
    default:
      return null;
  }
}

/** The argv as one bash command line (words quoted where needed), so the policy reads what will run. */
function commandLine(argv: readonly string[]): string {
  return argv
    .map((word) => (/^[\w./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`))
    .join(" ");
}
