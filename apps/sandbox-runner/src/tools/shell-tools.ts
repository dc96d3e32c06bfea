import type {
  AgentCommandSummary,
  AgentOutputPage,
  AgentShellCommandResult,
  AgentShellDescription,
  ShellExecInput,
  ShellHistoryInput,
  ShellIdInput,
  ShellReadCommandInput,
  ShellReadLastOutputInput,
  ShellSetCwdInput,
  ShellSetEnvInput,
  ShellUnsetEnvInput,
  ShellWaitInput,
} from "@wakeloop/contracts";
import {
  BACKGROUND_OUTPUT_CHARS,
  describeEnding,
  FINISHED_OUTPUT_CHARS,
  ok,
  outputWithNotice,
  type ToolOutcome,
} from "./output-format";
import type { ToolContext } from "./tool-context";

const lastOutputHint = (shellId: string) => (offset: number) =>
  `shell_read_last_output ${JSON.stringify({ shell_id: shellId, offset })}`;

/** The next bounded move for a busy or closed shell, so the model does not have to guess it. */
function nextStep(shell: AgentShellDescription): string | null {
  if (shell.busy)
    return `shell ${shell.shellId} is busy: use shell_wait, or read its output with shell_read_last_output`;
  if (!shell.open && shell.closedReason !== "not opened yet") {
    return `shell ${shell.shellId} is closed (${shell.closedReason}); shell_exec reopens it with the kept cwd and env, or use shell_restart`;
  }
  return null;
}

function describeShell(shell: AgentShellDescription, extra: Record<string, unknown> = {}): ToolOutcome {
  const view = {
    shell_id: shell.shellId,
    open: shell.open,
    busy: shell.busy,
    cwd: shell.cwd,
    env_overrides: shell.env,
    unset: shell.unset,
    closed_reason: shell.closedReason,
    current_command: shell.currentCommand
      ? {
          command_id: shell.currentCommand.commandId,
          command: shell.currentCommand.command,
          started_at: shell.currentCommand.startedAt,
        }
      : null,
    live_output_preview: shell.livePreview,
    next_step: nextStep(shell),
    ...extra,
  };
  return ok(JSON.stringify(view, null, 2), { ...view });
}

function commandOutcome(ctx: ToolContext, result: AgentShellCommandResult, waitedMs: number): ToolOutcome {
  const hint = lastOutputHint(result.shellId);
  const page = result.output as AgentOutputPage;
  const { output: _output, shell: _shell, ...summary } = result;
  if (result.status === "running") {
    const text =
      `[still running after ${waitedMs} ms as ${result.commandId}; it keeps running — use shell_wait ` +
      `${JSON.stringify({ shell_id: result.shellId })} or shell_read_last_output]\n` +
      outputWithNotice(page, hint);
    return ok(text, { ...summary, cwd: result.shell.cwd });
  }
  const ending = describeEnding(result, undefined, ctx.environment.workspace_mb);
  const text = `${outputWithNotice(page, hint)}\n${ending}\n[cwd: ${result.shell.cwd}]`;
  return {
    isError: result.exitCode !== 0,
    text,
    details: { ...summary, cwd: result.shell.cwd },
  };
}

export async function shellExecTool(ctx: ToolContext, input: ShellExecInput): Promise<ToolOutcome> {
  const waitMs = input.timeout_ms ?? ctx.environment.command_timeout_ms;
  const result = await ctx.channel.call("shell.exec", {
    shellId: input.shell_id,
    callId: ctx.callId,
    command: input.command,
    waitMs,
    maxChars: FINISHED_OUTPUT_CHARS,
    runningMaxChars: BACKGROUND_OUTPUT_CHARS,
  });
  return commandOutcome(ctx, result, waitMs);
}

export async function shellWaitTool(ctx: ToolContext, input: ShellWaitInput): Promise<ToolOutcome> {
  const result = await ctx.channel.call("shell.wait", {
    shellId: input.shell_id,
    waitMs: input.timeout_ms,
    maxChars: FINISHED_OUTPUT_CHARS,
    runningMaxChars: BACKGROUND_OUTPUT_CHARS,
  });
  if (result.status === "idle")
    return ok(`shell ${input.shell_id} has not run a command yet`, { status: "idle" });
  return commandOutcome(ctx, result, input.timeout_ms);
}

export async function shellOpenTool(ctx: ToolContext, input: ShellIdInput): Promise<ToolOutcome> {
  return describeShell(await ctx.channel.call("shell.open", { shellId: input.shell_id }));
}

export async function shellCloseTool(ctx: ToolContext, input: ShellIdInput): Promise<ToolOutcome> {
  return describeShell(await ctx.channel.call("shell.close", { shellId: input.shell_id }));
}

export async function shellRestartTool(ctx: ToolContext, input: ShellIdInput): Promise<ToolOutcome> {
  return describeShell(await ctx.channel.call("shell.restart", { shellId: input.shell_id }));
}

export async function shellDescribeTool(ctx: ToolContext, input: ShellIdInput): Promise<ToolOutcome> {
  const shell = await ctx.channel.call("shell.describe", {
    shellId: input.shell_id,
  });
  return describeShell(shell, {
    recent_commands: shell.recent.map((c) => ({
      command_id: c.commandId,
      command: c.command,
      status: c.status,
      exit_code: c.exitCode,
    })),
    command_policy: {
      exec_security: ctx.environment.exec_security,
      exec_ask: ctx.environment.exec_ask,
      exec_allowlist: ctx.environment.exec_allowlist,
    },
    read_first_alternatives: ["bash", "read", "grep", "glob", "shell_read_last_output"],
  });
}

export async function shellHistoryTool(ctx: ToolContext, input: ShellHistoryInput): Promise<ToolOutcome> {
  const result = await ctx.channel.call("shell.history", {
    shellId: input.shell_id,
    limit: input.limit,
  });
  if (result.commands.length === 0)
    return ok(`shell ${input.shell_id} has no commands yet`, { commands: [] });
  const lines = result.commands.map((c) => {
    const ending = c.status === "running" ? "running" : describeEnding(c);
    const preview = c.outputPreview.trim().split("\n").slice(-3).join(" ⏎ ").slice(0, 200);
    return `${c.commandId} ${c.kind} ${ending} ${c.startedAt}\n  $ ${c.command.slice(0, 300)}${preview ? `\n  > ${preview}` : ""}`;
  });
  return ok(lines.join("\n"), { commands: result.commands });
}

function pageOutcome(
  result: AgentCommandSummary & { page: AgentOutputPage },
  hint: (offset: number) => string,
): ToolOutcome {
  const header = `${result.commandId} (${result.status === "running" ? "running" : describeEnding(result)}): $ ${result.command.slice(0, 300)}`;
  const { page, ...summary } = result;
  return ok(`${header}\n${outputWithNotice(page, hint)}`, { ...summary, from: page.from, total: page.total });
}

export async function shellReadLastOutputTool(
  ctx: ToolContext,
  input: ShellReadLastOutputInput,
): Promise<ToolOutcome> {
  const result = await ctx.channel.call("shell.lastOutput", {
    shellId: input.shell_id,
    offset: input.offset,
    limit: input.limit,
  });
  return pageOutcome(result, lastOutputHint(input.shell_id));
}

export async function shellReadCommandTool(
  ctx: ToolContext,
  input: ShellReadCommandInput,
): Promise<ToolOutcome> {
  const result = await ctx.channel.call("shell.readCommand", {
    commandId: input.command_id,
    offset: input.offset,
    limit: input.limit,
  });
  return pageOutcome(
    result,
    (offset) => `shell_read_command ${JSON.stringify({ command_id: input.command_id, offset })}`,
  );
}

export async function shellSetCwdTool(ctx: ToolContext, input: ShellSetCwdInput): Promise<ToolOutcome> {
  return describeShell(await ctx.channel.call("shell.setCwd", { shellId: input.shell_id, path: input.path }));
}

export async function shellSetEnvTool(ctx: ToolContext, input: ShellSetEnvInput): Promise<ToolOutcome> {
  return describeShell(
    await ctx.channel.call("shell.setEnv", {
      shellId: input.shell_id,
      name: input.name,
      value: input.value,
    }),
  );
}

export async function shellUnsetEnvTool(ctx: ToolContext, input: ShellUnsetEnvInput): Promise<ToolOutcome> {
  return describeShell(
    await ctx.channel.call("shell.unsetEnv", { shellId: input.shell_id, name: input.name }),
  );
}
