import type { ToolDefinition } from "@wakeloop/contracts";
import { z } from "zod";
import { managedTool, READ_ONLY_INLINE } from "./define";

export const TOOL_SEARCH = "tool_search";

export const ToolSearchInput = z.object({
  query: z
    .string()
    .min(1)
    .max(500)
    .describe("What you want to do, in a few words (e.g. 'schedule a reminder', 'read memory')"),
  max_results: z.number().int().min(1).max(20).default(5).describe("How many tools to return at most"),
});
export type ToolSearchInput = z.infer<typeof ToolSearchInput>;

/**
 * The door to the deferred tools (docs/tool-search.md): the model is offered a small core, and the
 * tools this finds are offered from its next step on. Group "tools", next to the tools that manage the
 * agent's own tools.
 */
export const toolSearchTool: ToolDefinition = managedTool({
  ...READ_ONLY_INLINE,
  name: TOOL_SEARCH,
  group: "tools",
  description:
    "Find more tools. Only a core set of tools is offered up front; many more exist (sessions, memory, " +
    "scheduling, UI, data, browser, MCP servers, your own tools...). Search by what you want to do; the " +
    "tools found are offered to you from your next step on.",
  input: ToolSearchInput,
});
