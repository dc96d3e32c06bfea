import MiniSearch from "minisearch";
import { TOOL_SEARCH } from "./builtins/tool-search";
import { compareNames } from "./compare-names";
import type { EffectiveTool } from "./effective-tool-set";
import type { SessionToolSet } from "./tool-offer";

/** One tool `tool_search` found: `offered` when the model already has it, else it is revealed. */
export interface ToolSearchMatch {
  name: string;
  description: string;
  offered: boolean;
}

interface ToolDocument {
  id: string;
  name: string;
  description: string;
  parameters: string;
}

const indexes = new WeakMap<SessionToolSet, MiniSearch<ToolDocument>>();

/**
 * Ranks the session's callable tools for a query (BM25+ over names, descriptions and parameter names,
 * with prefix and typo tolerance, by minisearch). Only the set's `tools` are indexed, so a tool the
 * policy pipeline or runtime gating removed is never found: searching grants nothing policy denies.
 * Equal scores are ordered by name, so the same set and query always give the same answer.
 */
export function searchTools(set: SessionToolSet, query: string, maxResults: number): ToolSearchMatch[] {
  const offered = new Set(set.offered.map((placement) => placement.tool));
  const byName = new Map(set.tools.map((tool) => [tool.name, tool]));
  const hits = indexFor(set)
    .search(query)
    .sort((a, b) => b.score - a.score || compareNames(String(a.id), String(b.id)));
  return hits.slice(0, maxResults).flatMap((hit) => {
    const tool = byName.get(String(hit.id));
    if (tool === undefined) return [];
    return [
      { name: tool.name, description: firstSentence(tool.description), offered: offered.has(tool.name) },
    ];
  });
}

function indexFor(set: SessionToolSet): MiniSearch<ToolDocument> {
  let index = indexes.get(set);
  if (index === undefined) {
    index = new MiniSearch<ToolDocument>({
      fields: ["name", "description", "parameters"],
      searchOptions: { boost: { name: 3, parameters: 1.5 }, prefix: true, fuzzy: 0.2, combineWith: "OR" },
    });
    index.addAll(set.tools.filter((tool) => tool.name !== TOOL_SEARCH).map(toolDocument));
    indexes.set(set, index);
  }
  return index;
}

function toolDocument(tool: EffectiveTool): ToolDocument {
  const properties = tool.inputSchema.properties;
  const parameters =
    typeof properties === "object" && properties !== null ? Object.keys(properties).join(" ") : "";
  return { id: tool.name, name: tool.name, description: tool.description, parameters };
}

/** The description's first sentence (at most 200 characters): enough to choose, cheap to return. */
function firstSentence(description: string): string {
  const end = description.search(/\.(\s|$)/);
  const sentence = end === -1 ? description : description.slice(0, end + 1);
  return sentence.length <= 200 ? sentence : `${sentence.slice(0, 197)}...`;
}
