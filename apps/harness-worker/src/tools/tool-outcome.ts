import type { Content, SessionEvent } from "@wakeloop/contracts";
import type { NewEvent } from "@wakeloop/db";
import type { ModelUsage } from "../wake/cost-meter";

/** What one executed call returns to the model. */
export interface ToolOutcome {
  content: Content;
  isError: boolean;
  /** Structured result kept in the tool-call ledger. */
  result?: unknown;
  /** Stopped by an interrupt before it finished. */
  cancelled?: boolean;
  /** It may have run before a crash; it was not run again. */
  unknown?: boolean;
  /** The model request the call made (llm_generate): the session's usage and cost, against its budget. */
  usage?: ModelUsage;
  /** Events of this session the call caused (`session.child_created`), committed before its result. */
  events?: NewEvent[];
  /**
   * Events the call appended to other sessions that must stop the wake holding them (a killed
   * sub-session): once the step commits, the worker holding each is told over the control subject.
   */
  stops?: SessionEvent[];
  /** Deferred tools the call revealed (`tool_search`), recorded on its result event. */
  revealed?: string[];
}

/** A call's result event: `agent.mcp_tool_result` for a call announced as `agent.mcp_tool_use`. */
export function resultEvent(
  mcp: boolean,
  id: string,
  content: Content,
  isError: boolean,
  revealed?: readonly string[],
): NewEvent {
  return mcp
    ? { type: "agent.mcp_tool_result", mcp_tool_use_id: id, content, is_error: isError }
    : {
        type: "agent.tool_result",
        tool_use_id: id,
        content,
        is_error: isError,
        ...(revealed !== undefined && { revealed_tools: [...revealed] }),
      };
}

export function jsonOutcome(value: unknown): ToolOutcome {
  return { content: [{ type: "text", text: JSON.stringify(value) }], isError: false, result: value };
}

export function errorOutcome(message: string): ToolOutcome {
  return { content: [{ type: "text", text: message }], isError: true, result: { error: message } };
}
