import { WakeloopApiError } from "@wakeloop/sdk";

/**
 * Exit codes, stable for scripts: 0 success, 1 the API refused or failed, 2 bad usage or input (flags,
 * agent file, config), 3 authentication or permission, 4 not found, 5 the gateway cannot be reached,
 * (Ctrl-C ends `sessions tail` the usual way, 130.)
 */
export const ExitCode = {
  failure: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  unreachable: 5,
} as const;

/** An error the CLI reports as is: one clear message and the exit code it ends with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.failure,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = "CliError";
  }
}

export interface ErrorReport {
  message: string;
  exitCode: number;
}

/** `tools[0].name`: a field path as a person reads it. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    text += typeof key === "number" ? `[${key}]` : `${text === "" ? "" : "."}${String(key)}`;
  }
  return text === "" ? "(top level)" : text;
}

/** The `path: message` lines of a 400's `details.issues`, when the gateway sent them. */
function issueLines(details: unknown): string[] {
  if (typeof details !== "object" || details === null || !("issues" in details)) return [];
  const { issues } = details as { issues: unknown };
  if (!Array.isArray(issues)) return [];
  return issues.map((issue: { path?: unknown; message?: unknown }) => {
    const path = Array.isArray(issue.path) ? fieldPath(issue.path as PropertyKey[]) : "(top level)";
    return `  ${path}: ${String(issue.message)}`;
  });
}

function apiReport(error: WakeloopApiError): ErrorReport {
  const { status } = error;
  const said = error.error.message;
  if (status === 401) {
    return {
      message: `authentication failed: ${said}\nRun \`wakeloop login\` again, or check WAKELOOP_API_KEY.`,
      exitCode: ExitCode.auth,
    };
  }
  if (status === 403) return { message: `permission denied: ${said}`, exitCode: ExitCode.auth };
  if (status === 404) return { message: `not found: ${said}`, exitCode: ExitCode.notFound };
  if (status === 429) {
    return { message: `rate limited: ${said}\nTry again later.`, exitCode: ExitCode.failure };
  }
  if (status >= 500) {
    return {
      message: `the gateway failed (${status} ${error.error.type}): ${said}\nTrying again later may help.`,
      exitCode: ExitCode.failure,
    };
  }
  const lines = [`the API refused the request (${status} ${error.error.type}): ${said}`];
  lines.push(...issueLines(error.error.details));
  return { message: lines.join("\n"), exitCode: ExitCode.failure };
}

/** Why a fetch failed: Node's `TypeError: fetch failed` has the socket error (ECONNREFUSED…) as cause. */
function networkFailure(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== "fetch failed") return undefined;
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  if (typeof cause?.code === "string") return cause.code;
  return typeof cause?.message === "string" ? cause.message : "fetch failed";
}

/** What the CLI prints for `error` and the code it exits with; `baseUrl` names the gateway it tried. */
export function reportError(error: unknown, baseUrl?: string): ErrorReport {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof WakeloopApiError) return apiReport(error);
  const code = networkFailure(error);
  if (code !== undefined) {
    return {
      message:
        `cannot reach the Wakeloop gateway${baseUrl ? ` at ${baseUrl}` : ""} (${code}): is it running?\n` +
        "Check the URL given to `wakeloop login` or WAKELOOP_URL.",
      exitCode: ExitCode.unreachable,
    };
  }
  return {
    message: `unexpected error: ${error instanceof Error ? error.message : String(error)}`,
    exitCode: ExitCode.failure,
  };
}
