import {
  type AgentProcessResult,
  type BashInput,
  type GrepInput,
  type RunSandboxCodeInput,
  type ShellRunInput,
  sandboxCodeArgv,
} from "@wakeloop/contracts";
import { INSPECTION_PATH, parseInspectionCommand } from "./inspection-command";
import {
  BACKGROUND_OUTPUT_CHARS,
  describeEnding,
  FINISHED_OUTPUT_CHARS,
  failure,
  ok,
  outputWithNotice,
  type ToolOutcome,
} from "./output-format";
import type { ToolContext } from "./tool-context";

/** Inspection commands are quick; they get this long unless the call or environment says less. */
const INSPECTION_TIMEOUT_MS = 30_000;

function readCommandHint(commandId: string | null) {
  return (offset: number) =>
    commandId === null
      ? `shell_read_last_output {"offset":${offset}}`
      : `shell_read_last_output {"offset":${offset}} (or shell_read_command {"command_id":"${commandId}","offset":${offset}})`;
}

function finished(ctx: ToolContext, result: AgentProcessResult, timeoutMs: number): ToolOutcome {
  const ending = describeEnding(result, timeoutMs, ctx.environment.workspace_mb);
  const text = `${outputWithNotice(result.output, readCommandHint(result.commandId))}\n${ending}`;
  const { output: _output, ...summary } = result;
  return { isError: result.exitCode !== 0, text, details: { ...summary, timeoutMs } };
}

function backgrounded(result: AgentProcessResult): ToolOutcome {
  const poll = (offset: number) =>
    `process {"action":"poll","process_id":"${result.processId}","offset":${offset}}`;
  const text =
    `Running in the background as process ${result.processId}.\n` +
    `${outputWithNotice(result.output, poll)}\n` +
    `[poll it with ${poll(result.output.from + result.output.text.length)}; write to its stdin or signal it with the process tool]`;
  const { output: _output, ...summary } = result;
  return ok(text, summary);
}

export async function bashTool(ctx: ToolContext, input: BashInput): Promise<ToolOutcome> {
  const parsed = parseInspectionCommand(input.command);
  if (!parsed.ok) return failure(parsed.code, parsed.message);
  const timeoutMs = Math.min(input.timeout_ms ?? INSPECTION_TIMEOUT_MS, ctx.environment.command_timeout_ms);
  const result = await ctx.channel.call("cmd.run", {
    callId: ctx.callId,
    argv: parsed.argv,
    command: input.command,
    cwd: input.cwd,
    env: { PATH: INSPECTION_PATH },
    timeoutMs,
    recordAs: "bash",
    maxChars: FINISHED_OUTPUT_CHARS,
  });
  return finished(ctx, result, timeoutMs);
}

export async function shellRunTool(ctx: ToolContext, input: ShellRunInput): Promise<ToolOutcome> {
  const timeoutMs = input.timeout_ms ?? ctx.environment.command_timeout_ms;
  const result = await ctx.channel.call("cmd.run", {
    callId: ctx.callId,
    argv: ["bash", "-c", input.command],
    command: input.command,
    cwd: input.cwd,
    shellEnv: true,
    env: input.env,
    // A background process lives until it ends or is signalled; only waited-for commands time out.
    timeoutMs: input.background ? undefined : timeoutMs,
    background: input.background,
    yieldMs: input.yield_ms,
    recordAs: "run",
    maxChars:
      input.background || input.yield_ms !== undefined ? BACKGROUND_OUTPUT_CHARS : FINISHED_OUTPUT_CHARS,
  });
  if (result.status === "running") return backgrounded(result);
  return finished(ctx, result, timeoutMs);
}

/**
 * run_sandbox_code: the interpreter gets the program text as one argument (no shell in between) and runs
 * in the base environment, timed out and capped like any finished command.
 */
export async function runSandboxCodeTool(ctx: ToolContext, input: RunSandboxCodeInput): Promise<ToolOutcome> {
  const timeoutMs = Math.min(input.timeout_ms ?? INSPECTION_TIMEOUT_MS, ctx.environment.command_timeout_ms);
  const result = await ctx.channel.call("cmd.run", {
    callId: ctx.callId,
    argv: sandboxCodeArgv(input),
    command: input.code,
    timeoutMs,
    // In the main shell's history, so a truncated output pages with shell_read_command.
    recordAs: "run",
    maxChars: FINISHED_OUTPUT_CHARS,
  });
  return finished(ctx, result, timeoutMs);
}

export async function grepTool(ctx: ToolContext, input: GrepInput): Promise<ToolOutcome> {
  // The search root goes through path safety first; rg itself does not follow symlinks.
  const root = await ctx.channel.call("fs.stat", { path: input.path ?? "." });
  const argv = ["rg", "--line-number", "--no-heading", "--with-filename", "--color=never"];
  argv.push("--max-columns=500", "--max-columns-preview", "--max-filesize=20M");
  if (input.ignore_case) argv.push("--ignore-case");
  if (input.fixed_strings) argv.push("--fixed-strings");
  if (input.context_lines > 0) argv.push("--context", String(input.context_lines));
  if (input.glob !== undefined) argv.push("--glob", input.glob);
  argv.push("--regexp", input.pattern, "--", root.path);
  const timeoutMs = Math.min(INSPECTION_TIMEOUT_MS, ctx.environment.command_timeout_ms);
  const result = await ctx.channel.call("cmd.run", {
    callId: ctx.callId,
    argv,
    command: argv.join(" "),
    timeoutMs,
    maxChars: 4 * FINISHED_OUTPUT_CHARS,
    head: true,
  });
  if (result.exitCode === 1 && !result.timedOut) return ok("No matches", { matches: 0 });
  if (result.exitCode !== 0) {
    return failure("grep_failed", `${result.output.text.trim() || describeEnding(result, timeoutMs)}`);
  }
  const lines = result.output.text.split("\n").filter((line) => line.length > 0);
  const shown = lines.slice(0, input.limit);
  let text = shown.join("\n");
  if (text.length > FINISHED_OUTPUT_CHARS) text = text.slice(0, FINISHED_OUTPUT_CHARS);
  const truncated =
    lines.length > shown.length ||
    result.output.total > result.output.text.length ||
    text.length === FINISHED_OUTPUT_CHARS;
  if (truncated)
    text += `\n[more matches than shown (limit ${input.limit}); narrow the pattern, path or glob]`;
  return ok(text, { lines: shown.length, truncated });
}
