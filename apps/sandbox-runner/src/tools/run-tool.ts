import { type SandboxToolName, sandboxToolInputs } from "@wakeloop/contracts";
import { z } from "zod";
import { AgentCallError } from "../agent-channel";
import {
  browserActionTool,
  browserClickTool,
  browserCloseTool,
  browserEvaluateTool,
  browserExtractHtmlTool,
  browserExtractTextTool,
  browserNavigateTool,
  browserScreenshotTool,
  browserTypeTool,
} from "./browser-tools";
import { bashTool, grepTool, runSandboxCodeTool, shellRunTool } from "./command-tools";
import { editTool, globTool, lsTool, readTool, writeTool } from "./file-tools";
import { failure, type ToolOutcome, workspaceFullMessage } from "./output-format";
import { applyPatchTool } from "./patch-tool";
import { processTool } from "./process-tool";
import {
  compareTool,
  listVersionsTool,
  promoteTool,
  readVersionTool,
  restoreTool,
  stageTool,
} from "./resource-tools";
import { sandboxDescribeTool, sandboxExecuteTool } from "./sandbox-execute";
import {
  shellCloseTool,
  shellDescribeTool,
  shellExecTool,
  shellHistoryTool,
  shellOpenTool,
  shellReadCommandTool,
  shellReadLastOutputTool,
  shellRestartTool,
  shellSetCwdTool,
  shellSetEnvTool,
  shellUnsetEnvTool,
  shellWaitTool,
} from "./shell-tools";
import type { ToolContext } from "./tool-context";

type Handlers = {
  [K in SandboxToolName]: (
    ctx: ToolContext,
    input: z.output<(typeof sandboxToolInputs)[K]>,
  ) => Promise<ToolOutcome> | ToolOutcome;
};

const handlers: Handlers = {
  read: readTool,
  write: writeTool,
  edit: editTool,
  apply_patch: applyPatchTool,
  glob: globTool,
  grep: grepTool,
  ls: lsTool,
  bash: bashTool,
  shell_run: shellRunTool,
  shell_exec: shellExecTool,
  shell_open: shellOpenTool,
  shell_wait: shellWaitTool,
  shell_close: shellCloseTool,
  shell_restart: shellRestartTool,
  shell_describe: shellDescribeTool,
  shell_history: shellHistoryTool,
  shell_read_last_output: shellReadLastOutputTool,
  shell_read_command: shellReadCommandTool,
  shell_set_cwd: shellSetCwdTool,
  shell_set_env: shellSetEnvTool,
  shell_unset_env: shellUnsetEnvTool,
  process: processTool,
  sandbox_describe: sandboxDescribeTool,
  run_sandbox_code: runSandboxCodeTool,
  browser_navigate: browserNavigateTool,
  browser_screenshot: browserScreenshotTool,
  browser_click: browserClickTool,
  browser_type: browserTypeTool,
  browser_extract_text: browserExtractTextTool,
  browser_extract_html: browserExtractHtmlTool,
  browser_evaluate: browserEvaluateTool,
  browser_close: browserCloseTool,
  browser: (ctx, input) => browserActionTool(input, (tool, args) => runTool(ctx, tool, args)),
  sandbox_execute: (ctx, input) => sandboxExecuteTool(ctx, input, (tool, args) => runTool(ctx, tool, args)),
  resources_stage_from_substrate: stageTool,
  resources_list_versions: listVersionsTool,
  resources_read_version: readVersionTool,
  resources_restore_version: restoreTool,
  resources_compare_with_substrate: compareTool,
  resources_promote_to_substrate: promoteTool,
};

/**
 * Validates the model's input and runs the tool. Problems with the request itself (bad input, a
 * refused path, a busy shell) become an error result for the model; infrastructure failures throw.
 */
export async function runTool(ctx: ToolContext, tool: SandboxToolName, input: unknown): Promise<ToolOutcome> {
  const parsed = sandboxToolInputs[tool].safeParse(input ?? {});
  if (!parsed.success) return failure("invalid_input", `${tool}: ${z.prettifyError(parsed.error)}`);
  const handler = handlers[tool] as (ctx: ToolContext, input: unknown) => Promise<ToolOutcome> | ToolOutcome;
  try {
    return await handler(ctx, parsed.data);
  } catch (error) {
    if (error instanceof AgentCallError && error.code === "ENOSPC") {
      return failure("workspace_full", workspaceFullMessage(ctx.environment.workspace_mb));
    }
    if (error instanceof AgentCallError) return failure(error.code, error.message);
    throw error;
  }
}
