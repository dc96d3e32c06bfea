import {
  type SandboxAction,
  type SandboxExecuteInput,
  type SandboxToolName,
  sandboxToolInputs,
  WriteInput,
} from "@wakeloop/contracts";
import { z } from "zod";
import { INSPECTION_PROGRAMS } from "./inspection-options";
import {
  BACKGROUND_OUTPUT_CHARS,
  FINISHED_OUTPUT_CHARS,
  failure,
  ok,
  type ToolOutcome,
} from "./output-format";
import type { ToolContext } from "./tool-context";

/** Each low-level action runs as one of the first-class tools, with that tool's input schema. */
export const ACTION_TOOLS: Record<SandboxAction, SandboxToolName | null> = {
  list_dir: "ls",
  read_text: "read",
  write_text: "write",
  append_text: null,
  replace_text: "edit",
  mkdir: null,
  stat: null,
  find_entries: "glob",
  grep_text: "grep",
  run_command: "bash",
  run_shell: "shell_run",
  inspect_persistent_shell: "shell_describe",
  open_persistent_shell: "shell_open",
  exec_persistent_shell: "shell_exec",
  wait_persistent_shell: "shell_wait",
  close_persistent_shell: "shell_close",
};

const PathArgs = z.object({ path: z.string().min(1).max(4_096) });

export type RunTool = (tool: SandboxToolName, input: unknown) => Promise<ToolOutcome>;

export async function sandboxExecuteTool(
  ctx: ToolContext,
  input: SandboxExecuteInput,
  runTool: RunTool,
): Promise<ToolOutcome> {
  const tool = ACTION_TOOLS[input.action];
  if (tool !== null) return runTool(tool, input.args);
  const parsed = (input.action === "append_text" ? WriteInput : PathArgs).safeParse(input.args);
  if (!parsed.success) return failure("invalid_input", `${input.action}: ${z.prettifyError(parsed.error)}`);
  const args = parsed.data as { path: string; content?: string }; // content: WriteInput requires it
  switch (input.action) {
    case "append_text": {
      const result = await ctx.channel.call("fs.write", {
        path: args.path,
        content: args.content ?? "",
        append: true,
      });
      return ok(`Appended ${result.bytes} bytes to ${result.path}`, result);
    }
    case "mkdir": {
      const result = await ctx.channel.call("fs.mkdir", args);
      return ok(`${result.created ? "Created" : "Exists"}: ${result.path}`, result);
    }
    case "stat": {
      const result = await ctx.channel.call("fs.stat", args);
      return ok(JSON.stringify(result, null, 2), result);
    }
    default:
      return failure("invalid_input", `unknown action ${input.action}`);
  }
}

/** The sandbox's contract: mounts, limits, network, command policy and the actions with their args. */
export function sandboxDescribeTool(ctx: ToolContext): ToolOutcome {
  const env = ctx.environment;
  const actions = Object.fromEntries(
    Object.entries(ACTION_TOOLS).map(([action, tool]) => {
      if (tool === null) return [action, action === "append_text" ? "{path, content}" : "{path}"];
      return [
        action,
        { same_as_tool: tool, args: z.toJSONSchema(sandboxToolInputs[tool], { io: "input" }).properties },
      ];
    }),
  );
  const view = {
    mounts: ctx.mounts,
    constraints: {
      user: "sandbox (uid 1000), no capabilities, read-only root filesystem",
      writable: ["/workspace (unless mounted ro)", "/tmp (tmpfs)", "$HOME (tmpfs)"],
      cpus: env.cpus,
      memory_mb: env.memory_mb,
      pids_limit: env.pids_limit,
      workspace_mb: env.workspace_mb,
      network: env.network === "none" ? "none (no network access)" : "bridge",
      command_timeout_ms: env.command_timeout_ms,
      output_limits: {
        finished_command_chars: FINISHED_OUTPUT_CHARS,
        background_chars: BACKGROUND_OUTPUT_CHARS,
      },
      paths:
        "relative paths start at /workspace; .., symlinks or hard links leaving it, and devices are refused",
    },
    command_policy: {
      exec_security: env.exec_security,
      exec_ask: env.exec_ask,
      exec_allowlist: env.exec_allowlist,
      bash_programs: INSPECTION_PROGRAMS,
    },
    actions,
  };
  return ok(JSON.stringify(view, null, 2), view);
}
