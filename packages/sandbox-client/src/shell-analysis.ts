import { createRequire } from "node:module";
import type sh from "mvdan-sh";

// What a command line runs, read by mvdan/sh's bash parser (the parser behind shfmt), so the exec
// policy sees the commands bash will see. The analysis accepts a deliberately small subset: simple
// commands joined by ; & && || | |&, whose program is a plain word. Everything that can run something
// other than the named program, change how it is found, or touch files before it starts fails the
// analysis, and a failed analysis is an allowlist miss. A construct this file does not know is a
// failure too, so a newer bash feature can only ever ask, never allow.
//
// Why mvdan-sh: sh-syntax (the maintained WASM build of the same parser) returns positions only, not
// node types, so it cannot tell a call from a subshell; @ericcornelissen/bash-parser follows the POSIX
// grammar and reads bash's `[[`, `coproc` and brace expansion as plain commands. mvdan-sh is frozen,
// which the fail-closed walk below makes safe: what it cannot parse is a miss.

/** One simple command: its program and its arguments; `null` is an argument only known at run time. */
export type SimpleCommand = { program: string; args: Array<string | null> };

export type ShellAnalysis =
  | { ok: true; commands: SimpleCommand[]; operators: number }
  | { ok: false; reason: string };

type Node = sh.Node;

class Unsafe extends Error {}

type Syntax = (typeof sh)["syntax"];
let loaded: { syntax: Syntax; parser: sh.Parser } | undefined;

/**
 * Loads the parser on first use. Its GopherJS runtime sets `Error.stackTraceLimit = Infinity` and
 * `globalThis.require` when it loads; both are put back so the process is otherwise unchanged.
 */
function shellParser(): { syntax: Syntax; parser: sh.Parser } {
  if (loaded) return loaded;
  const stackTraceLimit = Error.stackTraceLimit;
  const hadRequire = Object.hasOwn(globalThis, "require");
  const { syntax } = createRequire(import.meta.url)("mvdan-sh") as typeof sh;
  Error.stackTraceLimit = stackTraceLimit;
  if (!hadRequire) Reflect.deleteProperty(globalThis, "require");
  loaded = { syntax, parser: syntax.NewParser(syntax.Variant(syntax.LangBash)) };
  return loaded;
}

/** Statement kinds other than simple commands and lists, by the reason they are a miss. */
const COMPOUND: Record<string, string> = {
  Subshell: "subshell",
  Block: "brace group",
  FuncDecl: "function definition",
  ArithmCmd: "arithmetic command",
  DeclClause: "declaration (export, declare, local, readonly)",
  LetClause: "let (arithmetic)",
  TestClause: "[[ test ]]",
  IfClause: "if",
  WhileClause: "while/until loop",
  ForClause: "for loop",
  CaseClause: "case",
  TimeClause: "time",
  CoprocClause: "coproc",
};

/** Word parts that run code while the word is expanded, or that bash may not read as mvdan/sh does. */
const EXECUTING_PARTS: Record<string, string> = {
  CmdSubst: "command substitution",
  ProcSubst: "process substitution",
  ArithmExp: "arithmetic expansion",
  // Bash without `shopt -s extglob` rejects `!(…)`; failing here keeps the parser and bash agreeing.
  ExtGlob: "extended glob",
};

/** Unquoted characters that make bash expand a word (globs, brace expansion, tilde, escapes). */
const EXPANDING = /[*?[\]{}~\\]/;

export function analyzeCommand(command: string): ShellAnalysis {
  let file: sh.File;
  try {
    file = shellParser().parser.Parse(command, "");
  } catch (error) {
    return { ok: false, reason: `cannot be parsed: ${parseMessage(error)}` };
  }
  const commands: SimpleCommand[] = [];
  const counter = { operators: 0 };
  try {
    for (const stmt of file.Stmts) visitStmt(stmt, commands, counter);
  } catch (error) {
    if (error instanceof Unsafe) return { ok: false, reason: error.message };
    throw error;
  }
  if (commands.length === 0) return { ok: false, reason: "empty command" };
  return { ok: true, commands, operators: counter.operators };
}

function visitStmt(stmt: sh.Stmt | null, commands: SimpleCommand[], counter: { operators: number }): void {
  if (stmt === null) throw new Unsafe("unrecognised statement");
  if (stmt.Redirs.length > 0) throw new Unsafe("redirection");
  if (stmt.Coprocess) throw new Unsafe("coproc");
  if (stmt.Background) counter.operators += 1;
  const cmd = stmt.Cmd;
  const type = cmd ? shellParser().syntax.NodeType(cmd) : "none";
  if (type === "BinaryCmd") {
    const binary = cmd as sh.BinaryCmd;
    counter.operators += 1;
    visitStmt(binary.X, commands, counter);
    visitStmt(binary.Y, commands, counter);
    return;
  }
  if (type !== "CallExpr") throw new Unsafe(COMPOUND[type] ?? `unrecognised syntax (${type})`);
  const call = cmd as sh.CallExpr;
  if (call.Assigns.length > 0) throw new Unsafe("variable assignment");
  const [programWord, ...argWords] = call.Args;
  if (programWord === undefined) throw new Unsafe("empty command");
  const program = wordValue(programWord);
  if (program === null) throw new Unsafe("the program name is not a plain word (glob, expansion or escape)");
  commands.push({ program, args: argWords.map(wordValue) });
}

/** The word's value when it is static text; `null` when only bash knows it. Throws on code that runs. */
function wordValue(word: sh.Word | null): string | null {
  if (word === null) throw new Unsafe("unrecognised word");
  return partsValue(word.Parts, false);
}

function partsValue(parts: readonly Node[], quoted: boolean): string | null {
  let value: string | null = "";
  for (const part of parts) {
    const piece = partValue(part, quoted);
    value = value === null || piece === null ? null : value + piece;
  }
  return value;
}

function partValue(part: Node, quoted: boolean): string | null {
  const type = shellParser().syntax.NodeType(part);
  switch (type) {
    case "Lit": {
      const text = (part as sh.Lit).Value;
      if (quoted) return text.includes("\\") ? null : text;
      return EXPANDING.test(text) ? null : text;
    }
    case "SglQuoted": {
      const single = part as sh.SglQuoted;
      return single.Dollar ? null : single.Value; // $'…' decodes escapes: not the text as written
    }
    case "DblQuoted": {
      const double = part as sh.DblQuoted;
      const inner = partsValue(double.Parts, true);
      return double.Dollar ? null : inner;
    }
    case "ParamExp":
      return plainParameter(part as sh.ParamExp);
    default:
      throw new Unsafe(EXECUTING_PARTS[type] ?? `unrecognised word syntax (${type})`);
  }
}

/**
 * `$name` and `${name}` only. Operators can run code: `${x@P}` expands prompt escapes including
 * `$(…)`, indirection `${!x}` and offsets or indices evaluate arithmetic on a variable's value.
 */
function plainParameter(param: sh.ParamExp): null {
  const plain =
    !param.Excl &&
    !param.Length &&
    !param.Width &&
    param.Index === null &&
    param.Slice === null &&
    param.Repl === null &&
    !param.Names &&
    param.Exp === null;
  if (!plain) throw new Unsafe("parameter expansion with an operator");
  return null;
}

function parseMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  const text = (error as { Error?: () => string })?.Error?.();
  return typeof text === "string" ? text : String(error);
}
