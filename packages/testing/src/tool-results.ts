import type { SessionEvent } from "@wakeloop/contracts";

/** A tool result's JSON, read loosely: the assertions of a test say what shape they expect. */
// biome-ignore lint/suspicious/noExplicitAny: tests assert on tool results of every shape
type Parsed = any;

export interface ToolResultView {
  name: string;
  isError: boolean;
  /** The result's text parsed as JSON, or the text itself (an error message). */
  value: Parsed;
}

/** The tool results (managed and MCP) among `events`, in order, each with its tool's name. */
export function toolResults(events: readonly SessionEvent[]): ToolResultView[] {
  const names = new Map<string, string>();
  const out: ToolResultView[] = [];
  for (const event of events) {
    if (event.type === "agent.tool_use" || event.type === "agent.mcp_tool_use")
      names.set(event.id, event.name);
    if (event.type === "agent.tool_result" || event.type === "agent.mcp_tool_result") {
      const id = event.type === "agent.tool_result" ? event.tool_use_id : event.mcp_tool_use_id;
      const text = event.content.map((block) => ("text" in block ? block.text : "")).join("");
      let value: unknown = text;
      try {
        value = JSON.parse(text);
      } catch {
        // an error message: keep the text
      }
      out.push({ name: names.get(id) ?? "?", isError: event.is_error, value });
    }
  }
  return out;
}
