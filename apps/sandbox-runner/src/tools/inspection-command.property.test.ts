import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseInspectionCommand } from "./inspection-command";
import { INSPECTION_OPTIONS } from "./inspection-options";

// The `bash` tool runs without approval, so no spelling of an option that writes files or runs a
// program may get through: GNU getopt reads abbreviations (`--compress-prog`), `--opt=value`,
// clustered short options (`-uo out`) and attached values (`-S1k`). The oracle below is GNU
// getopt_long over sort's real option table (coreutils 9.1): whatever argv the tool accepts, sort
// itself must see only options of the allow-list.

type Arity = "none" | "required" | "optional";

/** sort's whole option table, the forbidden ones included. */
const SORT_SHORT = "bcCdfghik:mMno:rRsS:t:T:uVy:z";
const SORT_LONG: Record<string, [Arity, string]> = {
  "ignore-leading-blanks": ["none", "b"],
  check: ["optional", "check"],
  "compress-program": ["required", "compress-program"],
  debug: ["none", "debug"],
  "dictionary-order": ["none", "d"],
  "ignore-case": ["none", "f"],
  "files0-from": ["required", "files0-from"],
  "general-numeric-sort": ["none", "g"],
  "ignore-nonprinting": ["none", "i"],
  key: ["required", "k"],
  merge: ["none", "m"],
  "month-sort": ["none", "M"],
  "numeric-sort": ["none", "n"],
  "human-numeric-sort": ["none", "h"],
  "version-sort": ["none", "V"],
  "random-sort": ["none", "R"],
  "random-source": ["required", "random-source"],
  sort: ["required", "sort"],
  output: ["required", "o"],
  reverse: ["none", "r"],
  stable: ["none", "s"],
  "batch-size": ["required", "batch-size"],
  "buffer-size": ["required", "S"],
  "field-separator": ["required", "t"],
  "temporary-directory": ["required", "T"],
  unique: ["none", "u"],
  "zero-terminated": ["none", "z"],
  parallel: ["required", "parallel"],
  help: ["none", "help"],
  version: ["none", "version"],
};
/** What sort may do without approval: everything but writing files and running programs. */
const SORT_FORBIDDEN = new Set(["o", "compress-program", "T"]);

/**
 * The options GNU getopt_long hands sort for `args` (with argument permutation), or "error" when it
 * stops with a usage error (nothing runs).
 */
function getoptSort(args: string[]): string[] | "error" {
  const seen: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i] as string;
    if (word === "--") break;
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const name = word.slice(2, equals === -1 ? undefined : equals);
      const exact = SORT_LONG[name];
      const matches = Object.keys(SORT_LONG).filter((option) => option.startsWith(name));
      const resolved = exact ?? (matches.length === 1 ? SORT_LONG[matches[0] as string] : undefined);
      if (resolved === undefined) return "error";
      const [arity, id] = resolved;
      if (arity === "none" && equals !== -1) return "error";
      if (arity === "required" && equals === -1) {
        if (i + 1 >= args.length) return "error";
        i += 1;
      }
      seen.push(id);
      continue;
    }
    if (word.startsWith("-") && word.length > 1) {
      for (let j = 1; j < word.length; j += 1) {
        const letter = word[j] as string;
        const at = SORT_SHORT.indexOf(letter);
        if (letter === ":" || at === -1) return "error";
        seen.push(letter);
        if (SORT_SHORT[at + 1] === ":") {
          if (j === word.length - 1) {
            if (i + 1 >= args.length) return "error";
            i += 1;
          }
          break;
        }
      }
    }
  }
  return seen;
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function command(program: string, args: string[]): string {
  return [program, ...args].map(quote).join(" ");
}

const value = fc.constantFrom("1k", "x", "out.txt", "sh", "-o", "--output=x", "=", "");
const longName = fc.constantFrom(...Object.keys(SORT_LONG));
/** A long option as the model might spell it: in full, abbreviated, with or without `=value`. */
const longSpelling = fc.tuple(longName, fc.nat(), fc.boolean(), value).map(([name, cut, attached, v]) => {
  const prefix = name.slice(0, Math.max(1, name.length - (cut % name.length)));
  return attached ? [`--${prefix}=${v}`] : [`--${prefix}`, v];
});
/** A cluster of short options, real or not, possibly with an attached value. */
const shortSpelling = fc
  .tuple(fc.array(fc.constantFrom(..."bcCdfghikmMnorRsStTuVyzxq"), { minLength: 1, maxLength: 4 }), value)
  .map(([letters, v]) => [`-${letters.join("")}${v}`]);
/** Operands: after `--` every word is one, so the refusals below put their options before any. */
const file = fc.constantFrom("in.txt", "-", "a b");
const operand = fc.oneof(file, fc.constant("--"));
const sortArgs = fc
  .array(
    fc.oneof(
      longSpelling,
      shortSpelling,
      operand.map((word) => [word]),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.flat());

describe("bash inspection options (property)", () => {
  it("sort sees no forbidden option in any argv the tool accepts", () => {
    fc.assert(
      fc.property(sortArgs, (args) => {
        const parsed = parseInspectionCommand(command("sort", args));
        if (!parsed.ok) return;
        const seen = getoptSort(args);
        if (seen === "error") return;
        expect(
          seen.filter((option) => SORT_FORBIDDEN.has(option)),
          args.join(" "),
        ).toEqual([]);
      }),
      { numRuns: 1_000 },
    );
  });

  it("refuses every spelling of an option that writes or runs a program", () => {
    const forbidden: Array<[string, string, boolean]> = [
      // program, long option, takes a value
      ["sort", "output", true],
      ["sort", "compress-program", true],
      ["sort", "temporary-directory", true],
      ["rg", "pre", true],
      ["rg", "pre-glob", true],
      ["rg", "search-zip", false],
      ["tail", "follow", false],
      ["diff", "paginate", false],
    ];
    const spelling = fc
      .tuple(fc.constantFrom(...forbidden), fc.nat(), fc.boolean(), fc.array(file, { maxLength: 2 }))
      .map(([[program, name, valued], cut, attached, around]) => {
        // Every prefix GNU getopt would still resolve to this option (at least its first letters).
        const prefix = name.slice(0, Math.max(Math.min(3, name.length), name.length - (cut % name.length)));
        const option = valued ? (attached ? [`--${prefix}=sh`] : [`--${prefix}`, "sh"]) : [`--${prefix}`];
        return { program, args: [...around, ...option, "x"] };
      });
    fc.assert(
      fc.property(spelling, ({ program, args }) => {
        expect(parseInspectionCommand(command(program, args)), args.join(" ")).toMatchObject({
          ok: false,
          code: "bash_option_not_allowed",
        });
      }),
    );
  });

  it("refuses a forbidden short option anywhere in a cluster, with or without an attached value", () => {
    const forbiddenShort: Array<[keyof typeof INSPECTION_OPTIONS, string]> = [
      ["sort", "o"],
      ["sort", "T"],
      ["rg", "z"],
      ["tail", "f"],
      ["diff", "l"],
    ];
    const cluster = fc
      .tuple(fc.constantFrom(...forbiddenShort), fc.array(fc.nat(), { maxLength: 3 }), fc.nat(), value)
      .map(([[program, letter], picks, at, attached]) => {
        const table = INSPECTION_OPTIONS[program];
        const flags = table.kind === "getopt" ? table.flags : "";
        const letters = picks.map((pick) => flags[pick % flags.length] as string);
        letters.splice(at % (letters.length + 1), 0, letter);
        return { program, args: ["in", `-${letters.join("")}${attached}`, "x"] };
      });
    fc.assert(
      fc.property(cluster, ({ program, args }) => {
        expect(parseInspectionCommand(command(program, args)), args.join(" ")).toMatchObject({
          ok: false,
          code: "bash_option_not_allowed",
        });
      }),
    );
  });

  it("accepts the allowed options however they are spelled", () => {
    const allowed = fc.constantFrom(
      ["sort", ["-S", "1k", "-rn", "f"]],
      ["sort", ["-S1k", "-t,", "-k2", "f"]],
      ["sort", ["-ruS1k", "--buffer-size=1k", "--field-separator", ":", "f"]],
      ["sort", ["f", "-o"].slice(0, 1)],
      ["rg", ["-n", "-A3", "--glob=*.ts", "-e", "-o", "x"]],
      ["grep", ["-rn5", "--include", "*.ts", "--color=never", "x", "."]],
      ["head", ["-5", "f"]],
      ["uniq", ["-c", "f"]],
      ["find", [".", "-name", "-exec", "-type", "f", "!", "-path", "*/node_modules/*"]],
      ["ls", ["-la", "--sort=time", "-w", "80"]],
    );
    fc.assert(
      fc.property(allowed, ([program, args]) => {
        expect(parseInspectionCommand(command(program as string, args as string[]))).toEqual({
          ok: true,
          argv: [program, ...(args as string[])],
        });
      }),
    );
  });
});
