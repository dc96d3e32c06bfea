import { exceedsJsonDepth, jsonDepthMessage, RunSandboxCodeInput } from "@wakeloop/contracts";
import { z } from "zod";

/**
 * The node program that runs one agent-defined tool call in the session's sandbox (never in a platform
 * process). It writes the tool's code and the libraries it requires into a fresh directory under the
 * sandbox's /tmp (`node_modules/<library>/index.js`, so `require("<library>")` is node's own resolution,
 * libraries requiring libraries included), runs the tool with its input, and prints one marked line
 * with the result and the captured console output, which `readToolRun` reads back.
 */

/** At most this many characters of console output come back as logs. */
const MAX_LOG_CHARS = 10_000;
/** A bigger result is refused in the sandbox, so the marked line always fits the captured output. */
export const MAX_RESULT_CHARS = 50_000;
const MAX_PROGRAM_CHARS = RunSandboxCodeInput.shape.code.maxLength ?? 32_000;

export interface ToolProgramInput {
  /** Marks the result line; the tool call id, so no earlier output can be taken for this call's result. */
  marker: string;
  code: string;
  libraries: ReadonlyArray<{ name: string; code: string }>;
  args: unknown;
}

export type ToolProgram = { ok: true; program: string } | { ok: false; message: string };

export function toolProgram(input: ToolProgramInput): ToolProgram {
  const files: Record<string, string> = {
    // The tool's code is an async function body; `resolve` is there for code written to call it.
    "tool.js": `module.exports = (args) => new Promise((resolve, reject) => {\n(async () => {\n${input.code}\n})().then((value) => { if (value !== undefined) resolve(value); }, reject);\n});\n`,
  };
  for (const library of input.libraries) files[`node_modules/${library.name}/index.js`] = library.code;
  const program = `"use strict";
const fs = require("node:fs"), path = require("node:path"), os = require("node:os"), util = require("node:util");
const marker = ${JSON.stringify(`@@wakeloop-tool-result:${input.marker}@@`)};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wl-tool-"));
for (const [name, text] of Object.entries(${JSON.stringify(files)})) {
  fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  fs.writeFileSync(path.join(dir, name), text);
}
const logs = []; let logChars = 0;
for (const level of ["log", "info", "warn", "error", "debug"]) {
  console[level] = (...parts) => {
    const line = util.format(...parts);
    if (logChars + line.length <= ${MAX_LOG_CHARS}) logs.push(line);
    logChars += line.length;
  };
}
const finish = (outcome) => {
  let text = JSON.stringify({ ...outcome, logs, logs_truncated: logChars > ${MAX_LOG_CHARS} });
  if (text.length > ${MAX_RESULT_CHARS}) text = JSON.stringify({ ok: false, error: "the result is " + text.length + " characters as JSON; at most ${MAX_RESULT_CHARS} are allowed", logs: [] });
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write("\\n" + marker + text + "\\n", () => process.exit(0));
};
Promise.resolve()
  .then(() => require(path.join(dir, "tool.js"))(${JSON.stringify(input.args)}))
  .then((value) => finish({ ok: true, result: value === undefined ? null : value }), (error) => finish({ ok: false, error: error instanceof Error ? error.stack || error.message : String(error) }));
`;
  if (program.length > MAX_PROGRAM_CHARS) {
    return {
      ok: false,
      message: `the tool with its input and libraries makes a ${program.length}-character program; the sandbox takes at most ${MAX_PROGRAM_CHARS}. Make the code, its libraries or the input smaller.`,
    };
  }
  return { ok: true, program };
}

export type ToolRun =
  | { ok: true; result: unknown; logs: string[]; logsTruncated: boolean }
  | { ok: false; error: string; logs: string[] };

// What the program prints after its marker, read back like any data crossing a boundary (invariant 8).
const ToolRunLine = z.object({
  ok: z.boolean(),
  result: z.unknown().optional(),
  error: z.string().optional(),
  logs: z.array(z.string()).default([]),
  logs_truncated: z.boolean().optional(),
});

/** The marked line of a finished program, or null when the program ended without printing one. */
export function readToolRun(output: string, marker: string): ToolRun | null {
  const mark = `@@wakeloop-tool-result:${marker}@@`;
  const at = output.lastIndexOf(mark);
  if (at < 0) return null;
  const line = output.slice(at + mark.length).split("\n", 1)[0] ?? "";
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return null;
  }
  // The agent's own code wrote this line: a value nothing could walk or store is its failure.
  if (exceedsJsonDepth(json)) return { ok: false, error: jsonDepthMessage("the tool's result"), logs: [] };
  const parsed = ToolRunLine.safeParse(json);
  if (!parsed.success) return null;
  const { ok, result, error, logs, logs_truncated } = parsed.data;
  if (ok) return { ok: true, result: result ?? null, logs, logsTruncated: logs_truncated === true };
  return { ok: false, error: error ?? "the tool failed", logs };
}
