import { analyzeCommand } from "@wakeloop/sandbox-client";
import {
  type FindTable,
  type GetoptTable,
  INSPECTION_OPTIONS,
  INSPECTION_PROGRAMS,
  type InspectionProgram,
  type OptionTable,
} from "./inspection-options";

// The `bash` tool is the low-risk hand: one inspection program, run from an argv without a shell,
// so nothing in the command line can chain, redirect or substitute, and with only the options of its
// allow-list (inspection-options.ts), read as the program reads them: clustered short options
// (`-uo`), attached values (`-S1k`), `--opt=value`. Long options must be spelled in full: GNU getopt
// takes any unambiguous abbreviation (`--compress-prog`), so a prefix of an allowed name could mean
// an option that is not on the list.

/** Where the program is looked up: the image's own directories, never /usr/local or a writable one. */
export const INSPECTION_PATH = "/usr/bin:/bin";

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
  if (!Object.hasOwn(INSPECTION_OPTIONS, program)) {
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
  const words = args as string[];
  const refusal = refusedArgument(INSPECTION_OPTIONS[program as InspectionProgram], words);
  if (refusal !== null) {
    return {
      ok: false,
      code: "bash_option_not_allowed",
      message: `${program}: ${refusal}; bash allows only inspection options (use shell_run for others)`,
    };
  }
  return { ok: true, argv: [program, ...words] };
}

/** Why `words` are not an allowed argument list for the program, or null when they are. */
function refusedArgument(table: OptionTable, words: string[]): string | null {
  switch (table.kind) {
    case "text":
      return null;
    case "find":
      return refusedFind(table, words);
    case "getopt":
      return refusedGetopt(table, words);
  }
}

function refusedGetopt(table: GetoptTable, words: string[]): string | null {
  let operands = 0;
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] as string;
    if (word === "--") {
      operands += words.length - i - 1;
      break;
    }
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const name = word.slice(2, equals === -1 ? undefined : equals);
      const arity = Object.hasOwn(table.long, name) ? table.long[name] : undefined;
      if (arity === undefined) {
        const meant = Object.keys(table.long).filter((option) => option.startsWith(name));
        return meant.length > 0 && name.length > 0
          ? `--${name} is not allowed (long options must be spelled in full: ${meant.map((m) => `--${m}`).join(", ")})`
          : `--${name} is not allowed`;
      }
      if (arity === "flag" && equals !== -1) return `--${name} takes no value`;
      // A required value not attached is the next word, whatever it looks like.
      if (arity === "value" && equals === -1) i += 1;
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let j = 1; j < word.length; j += 1) {
        const letter = word[j] as string;
        if (table.flags.includes(letter) || (table.numeric === true && /[0-9]/.test(letter))) continue;
        if (!table.valued.includes(letter)) return `-${letter} is not allowed`;
        // The rest of the word is the value (`-S1k`, `-uS1k`), or else the next word is.
        if (j === word.length - 1) i += 1;
        break;
      }
      continue;
    }
    operands += 1;
  }
  if (table.maxOperands !== undefined && operands > table.maxOperands) {
    return `at most ${table.maxOperands} operand(s) (another one would be a file it writes)`;
  }
  return null;
}

function refusedFind(table: FindTable, words: string[]): string | null {
  let i = 0;
  while (i < words.length && ["-H", "-L", "-P"].includes(words[i] as string)) i += 1;
  for (; i < words.length; i += 1) {
    const word = words[i] as string;
    const primary = (word.startsWith("-") && word.length > 1) || ["(", ")", "!", ","].includes(word);
    if (!primary) continue; // a starting point
    const arity = Object.hasOwn(table.primaries, word) ? table.primaries[word] : undefined;
    if (arity === undefined) return `${word} is not allowed`;
    i += arity;
  }
  return null;
}
