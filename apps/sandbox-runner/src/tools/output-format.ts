import type { AgentCommandSummary, AgentLimitDelta, AgentOutputPage, ImageBlock } from "@wakeloop/contracts";

/** Output limits of DESIGN §6: finished commands and background ones. */
export const FINISHED_OUTPUT_CHARS = 100_000;
export const BACKGROUND_OUTPUT_CHARS = 10_000;

/** What a tool call returns to the model: text plus structured details, and images after the text. */
export type ToolOutcome = {
  isError: boolean;
  text: string;
  details: Record<string, unknown>;
  images?: ImageBlock[];
};

export function ok(text: string, details: Record<string, unknown> = {}): ToolOutcome {
  return { isError: false, text, details };
}

export function failure(code: string, message: string, details: Record<string, unknown> = {}): ToolOutcome {
  return { isError: true, text: `Error (${code}): ${message}`, details: { code, ...details } };
}

type Ending = Pick<AgentCommandSummary, "exitCode" | "signal" | "timedOut" | "cancelled"> & {
  limits: AgentLimitDelta;
};

/** What the model reads when the workspace filesystem is full (a write failed with ENOSPC). */
export function workspaceFullMessage(workspaceMb: number): string {
  return `the workspace is full (${workspaceMb} MB, the environment's workspace_mb); remove files to make room`;
}

/** One line saying how a command ended, naming the limit it hit when one did. */
export function describeEnding(ending: Ending, timeoutMs?: number, workspaceMb?: number): string {
  const limits = ending.limits;
  let status: string;
  if (ending.cancelled) status = "interrupted: the command and every process it started were killed";
  else if (ending.timedOut) {
    status = `timed out after ${timeoutMs ?? "?"} ms: the command and every process it started were killed`;
  } else status = ending.signal ? `killed by ${ending.signal}` : `exit code ${ending.exitCode}`;
  const notes: string[] = [];
  if (limits && limits.memoryLimitKills > 0)
    notes.push("a process was killed for exceeding the sandbox memory limit");
  if (limits && limits.pidsLimitHits > 0) notes.push("the sandbox process limit was reached (fork failed)");
  if (limits?.workspaceFull && workspaceMb !== undefined) notes.push(workspaceFullMessage(workspaceMb));
  return `[${[status, ...notes].join("; ")}]`;
}

/**
 * The shown part of a command's output and, when something is missing, a notice saying how to read
 * it. `page.from` > 0 means earlier output exists; `page.total` beyond the page means later output.
 */
export function outputWithNotice(page: AgentOutputPage, howToRead: (offset: number) => string): string {
  const end = page.from + page.text.length;
  const notices: string[] = [];
  if (page.dropped > 0 && page.from === page.dropped && page.from > 0) {
    notices.push(`the first ${page.dropped} characters are no longer kept`);
  }
  if (page.from > page.dropped) {
    notices.push(
      `output truncated: showing characters ${page.from}-${end} of ${page.total}; read the start with ${howToRead(page.dropped)}`,
    );
  }
  if (end < page.total) {
    notices.push(`more output follows (${page.total - end} characters); continue with ${howToRead(end)}`);
  }
  const body = page.text.length > 0 ? page.text : "(no output)";
  return notices.length > 0 ? `${body}\n[${notices.join("; ")}]` : body;
}
