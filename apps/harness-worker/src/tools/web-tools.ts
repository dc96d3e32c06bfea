import { type Fetch, findEgressError } from "@wakeloop/egress";
import { WEB_FETCH_TOOLS, WebFetchInput, WebReadInput, WebSearchInput } from "@wakeloop/tool-runtime";
import { fetchPage, type SearchBackend, WebError } from "@wakeloop/web-access";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * What the `web` executor reaches the outside with. The tools run here, in the worker, rather than in a
 * sandbox: a sandbox has no network by default, and the egress guard (DESIGN §1, security §2) is
 * platform code that must hold whatever a tenant's sandbox allows.
 */
export interface WebAccess {
  /** The egress guard for tenant-aimed URLs: follows redirects, checking each hop. */
  fetch: Fetch;
  /** The operator's search backend; null when none is configured (web_search is then gated out). */
  search: SearchBackend | null;
  /** The platform's cap on returned characters; a call's `max_chars` may only lower it. */
  maxChars: number;
}

const isFetchTool = (name: string): boolean => (WEB_FETCH_TOOLS as readonly string[]).includes(name);

/**
 * Runs one web call. Refusals (egress rules, limits, bad URLs, binary content, error statuses) are
 * error results for the model; an interrupt is rethrown so the call is recorded as cancelled.
 */
export async function runWebTool(
  web: WebAccess,
  call: { name: string; input: Record<string, unknown> },
  signal: AbortSignal,
): Promise<ToolOutcome> {
  try {
    if (isFetchTool(call.name)) {
      const input =
        call.name === "web_read"
          ? { ...WebReadInput.parse(call.input), extract_mode: "markdown" as const }
          : WebFetchInput.parse(call.input);
      const maxChars = Math.min(input.max_chars ?? web.maxChars, web.maxChars);
      return jsonOutcome(
        await fetchPage(web.fetch, { url: input.url, extract: input.extract_mode, maxChars, signal }),
      );
    }
    if (call.name === "web_search") {
      if (web.search === null) return errorOutcome("web_search is not configured on this platform");
      const input = WebSearchInput.parse(call.input);
      const results = await web.search.search({
        query: input.query,
        count: input.count,
        ...(input.language && { language: input.language }),
        ...(input.time_range && { timeRange: input.time_range }),
        signal,
      });
      return jsonOutcome({ query: input.query, results });
    }
    return errorOutcome(`tool ${call.name} is not a web tool`);
  } catch (error) {
    if (signal.aborted) throw error;
    const refused = findEgressError(error);
    if (refused) return errorOutcome(refused.message);
    if (error instanceof WebError) return errorOutcome(error.message);
    const unreachable = connectionFailure(error);
    if (unreachable) return errorOutcome(`the host could not be reached (${unreachable})`);
    throw error;
  }
}

/** fetch's "fetch failed" hides the reason in its cause: ECONNREFUSED, ENOTFOUND, a TLS error. */
function connectionFailure(error: unknown): string | null {
  if (!(error instanceof TypeError) || !(error.cause instanceof Error)) return null;
  const code = (error.cause as Error & { code?: unknown }).code;
  return typeof code === "string" ? code : error.cause.message;
}
