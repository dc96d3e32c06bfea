import { searchTools, ToolSearchInput } from "@wakeloop/tool-runtime";
import { effectiveTools } from "../context/build-request";
import type { ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/**
 * `tool_search` (docs/tool-search.md): ranks the tools this session may call and reveals the deferred
 * ones it found; the result event records them (`revealed_tools`), so the session's next requests offer
 * them whichever worker builds them, and a replay offers the same.
 */
export function runToolSearch(ctx: ToolContext, input: Record<string, unknown>): ToolOutcome {
  const parsed = ToolSearchInput.safeParse(input);
  if (!parsed.success) return errorOutcome(`tool_search: ${parsed.error.issues[0]?.message ?? "bad input"}`);
  const { query, max_results } = parsed.data;
  const matches = searchTools(effectiveTools(ctx.view, ctx.settings), query, max_results);
  const revealed = matches.filter((match) => !match.offered).map((match) => match.name);
  return {
    ...jsonOutcome({
      tools: matches.map((match) => ({
        name: match.name,
        description: match.description,
        status: match.offered ? "already_offered" : "revealed",
      })),
      note:
        matches.length === 0
          ? "No tool matches; try other words."
          : "Revealed tools are offered to you from your next step on; call them then.",
    }),
    ...(revealed.length > 0 && { revealed }),
  };
}
