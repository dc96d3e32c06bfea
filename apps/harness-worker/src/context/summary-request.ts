import type { ModelRequest } from "@wakeloop/model-providers";
import { outcomeMessage } from "@wakeloop/session-core";
import type { ConversationEvent } from "./assemble-context";

/**
 * The first line of every summary request's system prompt. The fake model (`@wakeloop/fake-model`'s
 * `SUMMARY_REQUEST_MARKER`, held equal by a test) answers requests opening with it with a summary.
 */
export const SUMMARY_REQUEST_MARKER = "[context compaction]";

const SUMMARY_SYSTEM = `${SUMMARY_REQUEST_MARKER}
You write the summary that replaces the older part of a conversation between a user and an AI agent that uses tools. The agent goes on from your summary and the newest messages, without the older ones, so keep what it needs to continue: the user's goals and instructions, decisions made, facts learned (names, paths, ids, numbers), what tools were used for and what they showed, what is done and what is still open. Write plain prose and lists, no preamble.`;

/** Characters of one tool input or result the summariser is shown; the rest is cut with a note. */
export const TRANSCRIPT_PART_CHARS = 2_000;
/** Room for the summary's answer. */
export const SUMMARY_MAX_TOKENS = 2_048;

/**
 * The request that asks `model` to summarise `events`, folding in the `previous` summary: one user
 * message with the transcript as text (tool calls and results as lines, not as provider tool blocks,
 * which a request without tools may not carry), each part cut to TRANSCRIPT_PART_CHARS.
 */
export function summaryRequest(
  model: string,
  previous: string | null,
  events: readonly ConversationEvent[],
): ModelRequest {
  const lines: string[] = [];
  if (previous !== null) lines.push(`Summary of what came before:\n${previous}`, "");
  const names = new Map<string, string>();
  for (const event of events) lines.push(transcriptLine(event, names));
  return {
    model,
    system: SUMMARY_SYSTEM,
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: `Summarise this conversation:\n\n${lines.join("\n")}` }],
      },
    ],
    tools: [],
    maxOutputTokens: SUMMARY_MAX_TOKENS,
  };
}

function transcriptLine(event: ConversationEvent, names: Map<string, string>): string {
  switch (event.type) {
    case "user.message":
      return `user: ${cut(text(event.content))}`;
    case "user.define_outcome":
      return `user: ${cut(outcomeMessage(event))}`;
    case "agent.message":
      return `agent: ${cut(text(event.content))}`;
    case "agent.tool_use":
    case "agent.mcp_tool_use":
    case "agent.custom_tool_use":
      names.set(event.id, event.name);
      return `agent called ${event.name} (${event.id}): ${cut(JSON.stringify(event.input))}`;
    case "agent.tool_result":
      return resultLine(names.get(event.tool_use_id), event.tool_use_id, event.is_error, event.content);
    case "agent.mcp_tool_result":
      return resultLine(
        names.get(event.mcp_tool_use_id),
        event.mcp_tool_use_id,
        event.is_error,
        event.content,
      );
    case "user.custom_tool_result":
      return resultLine(
        names.get(event.custom_tool_use_id),
        event.custom_tool_use_id,
        event.is_error ?? false,
        event.content,
      );
  }
}

function resultLine(
  name: string | undefined,
  id: string,
  isError: boolean,
  content: Extract<ConversationEvent, { type: "agent.tool_result" }>["content"],
): string {
  return `${name ?? "tool"} (${id}) ${isError ? "failed" : "returned"}: ${cut(text(content))}`;
}

function text(content: Extract<ConversationEvent, { type: "agent.tool_result" }>["content"]): string {
  return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}

function cut(value: string): string {
  if (value.length <= TRANSCRIPT_PART_CHARS) return value;
  return `${value.slice(0, TRANSCRIPT_PART_CHARS)} […${value.length - TRANSCRIPT_PART_CHARS} more characters]`;
}
