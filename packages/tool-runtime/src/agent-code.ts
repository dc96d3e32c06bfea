import type { AgentCodeKind, JsonSchemaObject } from "@wakeloop/contracts";
import { type Node, Parser } from "acorn";
import jsx from "acorn-jsx";
import { simple } from "acorn-walk";
import { schemaProblem } from "./input-validation";

/*
 * Save-time checks of agent-defined tools, libraries and UI components (issue #13). The code is only
 * parsed here (acorn), never evaluated: it runs in the session's sandbox (tools, libraries) or in the
 * client (components). A save either passes every check or stores nothing.
 */

export const AGENT_CODE_LIMITS = {
  /** Tool and library code, characters: a tool with its libraries must fit one sandbox program. */
  codeChars: 16_000,
  /** Component code is sent to clients, not to the sandbox. */
  componentCodeChars: 64_000,
  descriptionChars: 1_000,
  /** A parameter or props schema, as JSON text. */
  schemaChars: 16_000,
  /** Live items of one kind per agent. */
  itemsPerKind: 100,
} as const;

/** Stored names: snake_case, short enough that the offered tool name stays within 64 characters. */
export const AGENT_CODE_NAME = /^[a-z][a-z0-9_]{0,47}$/;

export function agentCodeNameProblem(name: string): string | null {
  return AGENT_CODE_NAME.test(name)
    ? null
    : `"${name}" is not a valid name: use snake_case, a lowercase letter first, then lowercase letters, digits or _ (at most 48 characters)`;
}

/** What a save of one kind carries, after the tool's input schema has parsed it. */
export interface AgentCodeDraft {
  kind: AgentCodeKind;
  description: string;
  code: string;
  schema: JsonSchemaObject | null;
}

/** The library names a save requires, or the first problem that refuses it. */
export type AgentCodeCheck = { ok: true; requires: string[] } | { ok: false; message: string };

export function checkAgentCode(draft: AgentCodeDraft): AgentCodeCheck {
  const { kind, code } = draft;
  const maxChars =
    kind === "ui_component" ? AGENT_CODE_LIMITS.componentCodeChars : AGENT_CODE_LIMITS.codeChars;
  if (code.trim() === "") return { ok: false, message: "code is empty" };
  if (code.length > maxChars) {
    return { ok: false, message: `code is ${code.length} characters; at most ${maxChars} are allowed` };
  }
  if (draft.description.trim() === "") return { ok: false, message: "description is empty" };
  if (draft.description.length > AGENT_CODE_LIMITS.descriptionChars) {
    return {
      ok: false,
      message: `description is ${draft.description.length} characters; at most ${AGENT_CODE_LIMITS.descriptionChars} are allowed`,
    };
  }
  if (draft.schema !== null) {
    const problem = schemaCheck(kind, draft.schema);
    if (problem !== null) return { ok: false, message: problem };
  }
  try {
    const ast = parse(kind, code);
    return { ok: true, requires: kind === "ui_component" ? [] : requiredModules(ast) };
  } catch (error) {
    return { ok: false, message: `code does not parse: ${(error as Error).message}` };
  }
}

/** Why inline component code (`render_and_wait`'s `code`) would not render, or null: it must parse as JSX. */
export function inlineComponentProblem(code: string): string | null {
  try {
    parse("ui_component", code);
    return null;
  } catch (error) {
    return `code does not parse: ${(error as Error).message}`;
  }
}

function schemaCheck(kind: AgentCodeKind, schema: JsonSchemaObject): string | null {
  const what = kind === "tool" ? "parameter_schema" : "props_schema";
  const size = JSON.stringify(schema).length;
  if (size > AGENT_CODE_LIMITS.schemaChars) {
    return `${what} is ${size} characters as JSON; at most ${AGENT_CODE_LIMITS.schemaChars} are allowed`;
  }
  const problem = schemaProblem(schema);
  return problem === null ? null : `${what} is not a usable JSON Schema: ${problem}`;
}

const JsxParser = Parser.extend(jsx());

/**
 * A tool's code is the body of an async function of `args` (it may `return` and `await` at top
 * level); a library is a CommonJS module; a component is an ES module with JSX (`export default`).
 */
function parse(kind: AgentCodeKind, code: string): Node {
  if (kind === "ui_component") return JsxParser.parse(code, { ecmaVersion: "latest", sourceType: "module" });
  return Parser.parse(code, {
    ecmaVersion: "latest",
    sourceType: "script",
    allowReturnOutsideFunction: kind === "tool",
    allowAwaitOutsideFunction: kind === "tool",
    allowHashBang: false,
  });
}

/**
 * The names of `require("name")` calls with a literal argument, sorted: the libraries staged next to
 * the code when it runs. Node's own modules (`fs`, `node:path`) are not libraries and are left out.
 */
function requiredModules(ast: Node): string[] {
  const names = new Set<string>();
  simple(ast, {
    CallExpression(node) {
      const call = node as Node & {
        callee: Node & { name?: string };
        arguments: Array<Node & { value?: unknown }>;
      };
      const [first] = call.arguments;
      if (call.callee.type !== "Identifier" || call.callee.name !== "require" || call.arguments.length !== 1)
        return;
      if (first?.type === "Literal" && typeof first.value === "string" && AGENT_CODE_NAME.test(first.value)) {
        names.add(first.value);
      }
    },
  });
  return [...names].sort();
}

/**
 * The libraries to stage for code requiring `roots`: the transitive closure over each library's own
 * requires, in name order. Names with no library (node built-ins like `fs`) are skipped; node reports
 * a missing library when the code runs.
 */
export function libraryClosure(
  roots: readonly string[],
  libraries: ReadonlyMap<string, { requires: readonly string[] }>,
): string[] {
  const seen = new Set<string>();
  const pending = [...roots];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const library = libraries.get(name);
    if (library === undefined || seen.has(name)) continue;
    seen.add(name);
    pending.push(...library.requires);
  }
  return [...seen].sort();
}
