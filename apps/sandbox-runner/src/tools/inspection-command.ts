import { analyzeCommand } from "@wakeloop/sandbox-client";

// The `bash` tool is the low-risk hand: one inspection program, run from an argv without a shell,
// so nothing in the command line can chain, redirect or substitute. Programs that can write or run
// other programs through an option are refused on that option.

export const INSPECTION_PROGRAMS = [
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "rg",
  "grep",
  "find",
  "stat",
  "pwd",
  "echo",
  "du",
  "sort",
  "uniq",
  "diff",
  "cut",
  "basename",
  "dirname",
  "realpath",
] as const;

const FORBIDDEN_OPTIONS: Record<string, RegExp> = {
  find: /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/,
  rg: /^--(pre|pre-glob)(=.*)?$/,
  sort: /^(-o.*|--output(=.*)?|--compress-program(=.*)?)$/,
};

export type InspectionArgv = { ok: true; argv: string[] } | { ok: false; code: string; message: string };

export function parseInspectionCommand(command: string): InspectionArgv {
  const analysis = analyzeCommand(command);
  if (!analysis.ok) {
    return {
      ok: false,
      code: "bash_not_a_shell",
      message: `bash runs one program without a shell (${analysis.reason}); use shell_run for shell syntax`,
    };
  }
  const [simple, ...rest] = analysis.commands;
  if (simple === undefined || rest.length > 0 || analysis.operators > 0) {
    return {
      ok: false,
      code: "bash_not_a_shell",
      message: "bash runs one program: no ; & | && || (use shell_run)",
    };
  }
  const { program, args } = simple;
  if (!(INSPECTION_PROGRAMS as readonly string[]).includes(program)) {
    return {
      ok: false,
      code: "bash_program_not_allowed",
      message: `${program} is not an inspection program (${INSPECTION_PROGRAMS.join(", ")}); use shell_run`,
    };
  }
  // Without a shell nothing expands: `$HOME` or `*.ts` would reach the program as written.
  if (args.some((arg) => arg === null)) {
    return {
      ok: false,
      code: "bash_not_a_shell",
      message: "bash does not expand variables, globs or ~ (quote the text, or use shell_run)",
    };
  }
  const argv = [program, ...(args as string[])];
  const forbidden = FORBIDDEN_OPTIONS[program];
  const bad = forbidden ? argv.slice(1).find((word) => forbidden.test(word)) : undefined;
  if (bad !== undefined) {
    return {
      ok: false,
      code: "bash_option_not_allowed",
      message: `${program} ${bad} can change files or run programs; use shell_run`,
    };
  }
  return { ok: true, argv };
}
