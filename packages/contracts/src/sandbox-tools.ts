import { z } from "zod";
import { browserToolInputs } from "./browser-tools";

export * from "./browser-tools";

import { resourceToolInputs } from "./resources";

// Inputs of the model-facing tools that run in a session's sandbox ("hand"). The tool runtime turns
// them into ToolDefinitions; the sandbox-runner validates every call against the same schemas.

const Path = z.string().min(1).max(4_096).describe("Path inside /workspace (relative paths start there)");
const OptionalPath = Path.optional();
const ShellId = z
  .string()
  .regex(/^[a-z0-9_-]{1,32}$/, "shell ids match ^[a-z0-9_-]{1,32}$")
  .default("main")
  .describe("Persistent shell id; defaults to the session's main shell");
const TimeoutMs = z.number().int().min(100).max(3_600_000);
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "a shell variable name");

export const ReadInput = z.object({
  path: Path,
  offset: z.number().int().min(1).optional().describe("First line to return (1-based)"),
  limit: z.number().int().min(1).max(10_000).optional().describe("Number of lines to return"),
});
export type ReadInput = z.infer<typeof ReadInput>;

export const WriteInput = z.object({
  path: Path,
  content: z.string().max(10_000_000),
});
export type WriteInput = z.infer<typeof WriteInput>;

export const EditInput = z.object({
  path: Path,
  old_string: z.string().min(1),
  new_string: z.string(),
  replace_all: z.boolean().default(false).describe("Replace every match instead of requiring one"),
});
export type EditInput = z.infer<typeof EditInput>;

export const ApplyPatchInput = z.object({
  patch: z
    .string()
    .min(1)
    .max(10_000_000)
    .describe(
      "Unified diff (---/+++ headers, @@ hunks); may touch several files; /dev/null creates or deletes",
    ),
});
export type ApplyPatchInput = z.infer<typeof ApplyPatchInput>;

export const GlobInput = z.object({
  pattern: z.string().min(1).max(1_000).describe("Glob such as **/*.ts, matched relative to path"),
  path: OptionalPath,
  kind: z.enum(["file", "dir", "any"]).default("any"),
  limit: z.number().int().min(1).max(5_000).default(500),
});
export type GlobInput = z.infer<typeof GlobInput>;

export const GrepInput = z.object({
  pattern: z.string().min(1).max(1_000).describe("Regular expression (ripgrep syntax)"),
  path: OptionalPath,
  glob: z.string().max(1_000).optional().describe("Only search files matching this glob"),
  ignore_case: z.boolean().default(false),
  fixed_strings: z.boolean().default(false).describe("Treat the pattern as a literal string"),
  context_lines: z.number().int().min(0).max(20).default(0),
  limit: z.number().int().min(1).max(5_000).default(200).describe("Maximum matching lines"),
});
export type GrepInput = z.infer<typeof GrepInput>;

export const LsInput = z.object({
  path: OptionalPath,
  all: z.boolean().default(false).describe("Include dot files"),
});
export type LsInput = z.infer<typeof LsInput>;

export const BashInput = z.object({
  command: z
    .string()
    .min(1)
    .max(10_000)
    .describe("One inspection command run without a shell, e.g. `rg -n TODO src` or `wc -l a.txt`"),
  cwd: OptionalPath,
  timeout_ms: TimeoutMs.optional(),
});
export type BashInput = z.infer<typeof BashInput>;

export const ShellRunInput = z.object({
  command: z.string().min(1).max(100_000).describe("Shell command run by bash -c"),
  cwd: OptionalPath,
  env: z.record(EnvName, z.string().max(100_000)).optional(),
  timeout_ms: TimeoutMs.optional(),
  background: z.boolean().default(false).describe("Start and return a process id for the process tool"),
  yield_ms: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .optional()
    .describe("Move the command to the background if it is still running after this long"),
});
export type ShellRunInput = z.infer<typeof ShellRunInput>;

export const ShellExecInput = z.object({
  command: z.string().min(1).max(100_000).describe("Run in the persistent shell; cd and export persist"),
  shell_id: ShellId,
  timeout_ms: TimeoutMs.optional().describe("Stop waiting after this long; the command keeps running"),
});
export type ShellExecInput = z.infer<typeof ShellExecInput>;

export const ShellIdInput = z.object({ shell_id: ShellId });
export type ShellIdInput = z.infer<typeof ShellIdInput>;

export const ShellWaitInput = z.object({
  shell_id: ShellId,
  timeout_ms: z.number().int().min(0).max(600_000).default(10_000),
});
export type ShellWaitInput = z.infer<typeof ShellWaitInput>;

export const ShellHistoryInput = z.object({
  shell_id: ShellId,
  limit: z.number().int().min(1).max(100).default(20),
});
export type ShellHistoryInput = z.infer<typeof ShellHistoryInput>;

const OutputPage = {
  offset: z.number().int().min(0).default(0).describe("Character offset into the output"),
  limit: z.number().int().min(1).max(100_000).default(100_000),
};

export const ShellReadLastOutputInput = z.object({ shell_id: ShellId, ...OutputPage });
export type ShellReadLastOutputInput = z.infer<typeof ShellReadLastOutputInput>;

export const ShellReadCommandInput = z.object({
  command_id: z.string().min(1).max(64),
  ...OutputPage,
});
export type ShellReadCommandInput = z.infer<typeof ShellReadCommandInput>;

export const ShellSetCwdInput = z.object({ path: Path, shell_id: ShellId });
export type ShellSetCwdInput = z.infer<typeof ShellSetCwdInput>;

export const ShellSetEnvInput = z.object({
  name: EnvName,
  value: z.string().max(100_000),
  shell_id: ShellId,
});
export type ShellSetEnvInput = z.infer<typeof ShellSetEnvInput>;

export const ShellUnsetEnvInput = z.object({ name: EnvName, shell_id: ShellId });
export type ShellUnsetEnvInput = z.infer<typeof ShellUnsetEnvInput>;

/** One flat object (providers want an object at the top level); `process_id` is required except for list. */
export const ProcessInput = z
  .object({
    action: z.enum(["list", "poll", "write", "signal"]),
    process_id: z.string().min(1).max(64).optional(),
    ...OutputPage,
    input: z.string().max(1_000_000).optional().describe("For write: text sent to the process's stdin"),
    eof: z.boolean().default(false).describe("For write: close stdin after writing"),
    signal: z
      .enum(["SIGINT", "SIGTERM", "SIGKILL", "SIGHUP", "SIGUSR1", "SIGUSR2"])
      .default("SIGTERM")
      .describe("For signal: sent to the process's whole process group"),
  })
  .refine((input) => input.action === "list" || input.process_id !== undefined, {
    message: "process_id is required for poll, write and signal",
    path: ["process_id"],
  });
export type ProcessInput = z.infer<typeof ProcessInput>;

/** Interpreters of the sandbox image (infra/sandbox-image.sh) and how each takes a program text. */
export const SANDBOX_CODE_LANGUAGES = {
  javascript: ["node", "-e"],
  python: ["python3", "-c"],
  bash: ["bash", "-c"],
} as const;
export type SandboxCodeLanguage = keyof typeof SANDBOX_CODE_LANGUAGES;

export const RunSandboxCodeInput = z.object({
  // One argv string is capped at 128 KiB by Linux; 32 000 characters stay under it in any encoding.
  code: z.string().min(1).max(32_000).describe("The program text; what it prints is the result"),
  language: z
    .enum(Object.keys(SANDBOX_CODE_LANGUAGES) as [SandboxCodeLanguage, ...SandboxCodeLanguage[]])
    .default("javascript")
    .describe("javascript (node), python (python3) or bash"),
  timeout_ms: TimeoutMs.max(300_000).optional().describe("Stop the program after this long (default 30 s)"),
});
export type RunSandboxCodeInput = z.infer<typeof RunSandboxCodeInput>;

/** The argv that runs the code, the same in the runner and in the exec policy's view of the call. */
export function sandboxCodeArgv(input: Pick<RunSandboxCodeInput, "code" | "language">): string[] {
  return [...SANDBOX_CODE_LANGUAGES[input.language], input.code];
}

export const SandboxDescribeInput = z.object({});
export type SandboxDescribeInput = z.infer<typeof SandboxDescribeInput>;

/** Low-level actions of `sandbox_execute`; each maps onto one of the tools above. */
export const SandboxAction = z.enum([
  "list_dir",
  "read_text",
  "write_text",
  "append_text",
  "replace_text",
  "mkdir",
  "stat",
  "find_entries",
  "grep_text",
  "run_command",
  "run_shell",
  "inspect_persistent_shell",
  "open_persistent_shell",
  "exec_persistent_shell",
  "wait_persistent_shell",
  "close_persistent_shell",
]);
export type SandboxAction = z.infer<typeof SandboxAction>;

export const SandboxExecuteInput = z.object({
  action: SandboxAction,
  args: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("The action's arguments; see sandbox_describe"),
});
export type SandboxExecuteInput = z.infer<typeof SandboxExecuteInput>;

/** Every sandbox-executed tool and the schema its input must satisfy. */
export const sandboxToolInputs = {
  read: ReadInput,
  write: WriteInput,
  edit: EditInput,
  apply_patch: ApplyPatchInput,
  glob: GlobInput,
  grep: GrepInput,
  ls: LsInput,
  bash: BashInput,
  shell_run: ShellRunInput,
  shell_exec: ShellExecInput,
  shell_open: ShellIdInput,
  shell_wait: ShellWaitInput,
  shell_close: ShellIdInput,
  shell_restart: ShellIdInput,
  shell_describe: ShellIdInput,
  shell_history: ShellHistoryInput,
  shell_read_last_output: ShellReadLastOutputInput,
  shell_read_command: ShellReadCommandInput,
  shell_set_cwd: ShellSetCwdInput,
  shell_set_env: ShellSetEnvInput,
  shell_unset_env: ShellUnsetEnvInput,
  process: ProcessInput,
  sandbox_describe: SandboxDescribeInput,
  sandbox_execute: SandboxExecuteInput,
  run_sandbox_code: RunSandboxCodeInput,
  ...browserToolInputs,
  ...resourceToolInputs,
} as const;

export type SandboxToolName = keyof typeof sandboxToolInputs;
export const SandboxToolName = z.enum(
  Object.keys(sandboxToolInputs) as [SandboxToolName, ...SandboxToolName[]],
);
