import type { EnvironmentConfig } from "@wakeloop/contracts";

// Exec security (deny | allowlist | full) × ask (off | on-miss | always), after OpenClaw's exec
// approvals: "on-miss" asks only when an allowlist is in force and the command is not on it. Pure, so
// the harness decides "ask" before a call runs (the session's requires_action) and the runner checks
// the same verdict again when the call arrives.

export type ExecPolicyConfig = Pick<EnvironmentConfig, "exec_security" | "exec_ask" | "exec_allowlist">;
export type ExecVerdict = "allow" | "ask" | "deny";

/** `operators` counts ; & | && || between or after the simple commands (newlines only split them). */
type Analysis = { ok: true; segments: string[][]; operators: number } | { ok: false; reason: string };

/**
 * Splits a shell command into simple commands (words, quotes removed) on ; & | && || and newlines.
 * Substitutions make the real program unknowable, so they fail the analysis (an allowlist miss).
 */
export function analyzeCommand(command: string): Analysis {
  const segments: string[][] = [];
  let operators = 0;
  let words: string[] = [];
  let word = "";
  let inWord = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endSegment = () => {
    endWord();
    if (words.length > 0) segments.push(words);
    words = [];
  };
  for (let i = 0; i < command.length; i += 1) {
    const char = command[i] as string;
    const next = command[i + 1];
    if (char === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return { ok: false, reason: "unterminated single quote" };
      word += command.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (char === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j += 1) {
        if (command[j] === "\\") j += 1;
        else if (command[j] === "`" || (command[j] === "$" && command[j + 1] === "(")) {
          return { ok: false, reason: "command substitution" };
        }
      }
      if (j >= command.length) return { ok: false, reason: "unterminated double quote" };
      word += command.slice(i + 1, j).replace(/\\(["\\$`])/g, "$1");
      inWord = true;
      i = j;
    } else if (char === "\\") {
      word += next ?? "";
      inWord = true;
      i += 1;
    } else if (
      char === "`" ||
      (char === "$" && next === "(") ||
      ((char === "<" || char === ">") && next === "(")
    ) {
      return { ok: false, reason: "command or process substitution" };
    } else if (char === "&" && (next === ">" || command[i - 1] === ">" || command[i - 1] === "<")) {
      word += char; // a redirection (2>&1, &>file), not a separator
      inWord = true;
    } else if (char === ";" || char === "&" || char === "|" || char === "\n") {
      endSegment();
      if (char !== "\n") operators += 1;
      if ((char === "&" || char === "|") && next === char) i += 1;
    } else if (char === " " || char === "\t") {
      endWord();
    } else if (char === "(" || char === ")" || char === "{" || char === "}") {
      return { ok: false, reason: "subshell or group" };
    } else {
      word += char;
      inWord = true;
    }
  }
  endSegment();
  if (segments.length === 0) return { ok: false, reason: "empty command" };
  return { ok: true, segments, operators };
}

function globMatch(pattern: string, value: string): boolean {
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*");
  return new RegExp(`^${source}$`).test(value);
}

/** The words that name what runs: leading VAR=value assignments and redirections are skipped. */
function commandWords(segment: string[]): string[] {
  const words = segment.filter((w) => !/^\d*[<>]/.test(w));
  let start = 0;
  while (start < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[start] as string)) start += 1;
  return words.slice(start);
}

/**
 * An allowlist entry is a program (`git`, `/usr/bin/*`) or a word prefix with globs (`git status`,
 * `npm run *`). A program entry matches the program's path or its base name.
 */
function entryMatches(entry: string, words: string[]): boolean {
  const program = words[0];
  if (program === undefined) return true; // only assignments: nothing runs
  const parts = entry.trim().split(/\s+/);
  if (parts.length === 1) {
    const base = program.slice(program.lastIndexOf("/") + 1);
    return globMatch(entry.trim(), program) || globMatch(entry.trim(), base);
  }
  return parts.every((part, index) => words[index] !== undefined && globMatch(part, words[index] as string));
}

export function allowlistSatisfied(allowlist: readonly string[], command: string): boolean {
  const analysis = analyzeCommand(command);
  if (!analysis.ok) return false;
  return analysis.segments.every((segment) => {
    const words = commandWords(segment);
    return allowlist.some((entry) => entryMatches(entry, words));
  });
}

export function evaluateExecPolicy(config: ExecPolicyConfig, command: string): ExecVerdict {
  switch (config.exec_security) {
    case "deny":
      return "deny";
    case "full":
      return config.exec_ask === "always" ? "ask" : "allow";
    case "allowlist": {
      if (allowlistSatisfied(config.exec_allowlist, command))
        return config.exec_ask === "always" ? "ask" : "allow";
      return config.exec_ask === "off" ? "deny" : "ask";
    }
  }
}

/** One sentence for the model or the approver about why the verdict is what it is. */
export function explainExecVerdict(config: ExecPolicyConfig, command: string, verdict: ExecVerdict): string {
  if (verdict === "allow") return "allowed by the environment's exec policy";
  if (config.exec_security === "deny")
    return "the environment's exec policy denies all commands (exec_security=deny)";
  if (config.exec_security === "full" || config.exec_ask === "always") {
    return "the environment asks for approval of every command (exec_ask=always)";
  }
  const analysis = analyzeCommand(command);
  const why = analysis.ok
    ? "is not on the environment's exec allowlist"
    : `cannot be checked (${analysis.reason})`;
  return verdict === "deny"
    ? `the command ${why} and exec_ask=off, so it is denied`
    : `the command ${why}; it needs approval (exec_ask=on-miss)`;
}
