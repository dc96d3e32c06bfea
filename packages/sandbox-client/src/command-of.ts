import type { SandboxToolName } from "@wakeloop/contracts";

const COMMAND_ACTIONS = new Set(["run_command", "run_shell", "exec_persistent_shell"]);

function commandField(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return null;
  const command = (value as { command?: unknown }).command;
  return typeof command === "string" ? command : null;
}

/** The command line a call would run, for the exec policy; null when the call runs no command. */
export function commandOf(tool: SandboxToolName, input: unknown): string | null {
  switch (tool) {
    case "bash":
    case "shell_run":
    case "shell_exec":
      return commandField(input);
    case "sandbox_execute": {
      const { action, args } = (input ?? {}) as { action?: unknown; args?: unknown };
      return typeof action === "string" && COMMAND_ACTIONS.has(action) ? commandField(args) : null;
    }
    default:
      return null;
  }
}
