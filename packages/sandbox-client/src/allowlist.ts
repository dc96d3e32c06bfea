import { analyzeCommand, type SimpleCommand } from "./shell-analysis";

// How exec_allowlist entries match the commands the shell analysis found. An entry is a program,
// optionally followed by the words its arguments must start with (`git status`, `npm run *`; `*`
// matches any characters within one word).
//
// Programs match by canonical path:
// - a bare entry (`git`, `py*`) matches the bare program word `git`, which bash finds through the
//   sandbox's fixed PATH (changing PATH goes through the exec policy), and an absolute program
//   `/usr/bin/git` whose directory is one of those PATH directories. It never matches a program
//   elsewhere (`/workspace/git`, `/tmp/git`);
// - an absolute entry (`/usr/bin/git`, `/usr/bin/*`) matches only absolute programs with the same
//   canonical path (`//` and `/./` collapsed), never the bare word `git`;
// - a program path with `..` or a relative one (`./git`, `bin/git`) matches nothing: what it names
//   depends on the working directory, which the model controls.

/** The directories of the sandbox's PATH (apps/sandbox-runner/src/agent/base-env.cjs). */
export const SYSTEM_PROGRAM_DIRS = [
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
] as const;

type Program = { kind: "bare"; name: string } | { kind: "absolute"; path: string; dir: string; name: string };

/** Why a program word can never match an entry, or null when it can. */
export function unmatchableProgram(program: string): string | null {
  if (!program.includes("/")) return null;
  if (!program.startsWith("/")) return `relative program path (${program})`;
  if (program.split("/").includes("..")) return `program path with .. (${program})`;
  return null;
}

/**
 * Why each exec_allowlist entry could never match anything (an empty entry, a relative program path,
 * one with `..`), so an environment that holds one is refused when it is saved instead of silently
 * asking for every command the entry was meant to allow.
 */
export function allowlistEntryProblems(entries: readonly string[]): string[] {
  return entries.flatMap((entry) => {
    const [program = ""] = entry.trim().split(/\s+/);
    if (program === "") return [`an empty entry ("${entry}")`];
    const problem = unmatchableProgram(program);
    return problem === null
      ? []
      : [`"${entry}": a ${problem} never matches; name the program or its absolute path`];
  });
}

function canonicalProgram(word: string): Program | null {
  if (unmatchableProgram(word) !== null) return null;
  if (!word.includes("/")) return { kind: "bare", name: word };
  const segments = word.split("/").filter((segment) => segment !== "" && segment !== ".");
  const name = segments.pop();
  if (name === undefined) return null;
  const dir = `/${segments.join("/")}`;
  return { kind: "absolute", path: `${dir === "/" ? "" : dir}/${name}`, dir, name };
}

function globMatch(pattern: string, value: string, star = ".*"): boolean {
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", star);
  return new RegExp(`^${source}$`, "s").test(value);
}

function programMatches(entry: string, program: Program): boolean {
  if (entry.includes("/")) {
    const canonical = canonicalProgram(entry);
    // In a path entry `*` stays within one path segment: `/usr/bin/*` is not `/usr/bin/x/y`.
    return (
      canonical?.kind === "absolute" &&
      program.kind === "absolute" &&
      globMatch(canonical.path, program.path, "[^/]*")
    );
  }
  if (program.kind === "bare") return globMatch(entry, program.name);
  return (SYSTEM_PROGRAM_DIRS as readonly string[]).includes(program.dir) && globMatch(entry, program.name);
}

export function entryMatches(entry: string, command: SimpleCommand): boolean {
  const [first, ...words] = entry.trim().split(/\s+/);
  const program = canonicalProgram(command.program);
  if (first === undefined || first === "" || program === null || !programMatches(first, program))
    return false;
  return words.every((word, index) => {
    const arg = command.args[index];
    return typeof arg === "string" && globMatch(word, arg);
  });
}

export function allowlistSatisfied(allowlist: readonly string[], command: string): boolean {
  const analysis = analyzeCommand(command);
  if (!analysis.ok) return false;
  return analysis.commands.every((simple) => allowlist.some((entry) => entryMatches(entry, simple)));
}
