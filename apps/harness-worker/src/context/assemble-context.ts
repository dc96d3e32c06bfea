import type { Content, SessionEvent } from "@wakeloop/contracts";
import type { ModelAssistantPart, ModelMessage, ModelToolResult } from "@wakeloop/model-providers";

export const MISSING_RESULT = "No result was recorded for this call.";

/**
 * Turns a session's events into provider-neutral history. Tool results are placed right after the
 * assistant turn that made the calls (providers require it), so a user message that arrived while
 * tools ran is moved after those results; a call that never got a result gets an error result.
 */
export function eventsToMessages(events: readonly SessionEvent[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let assistant: ModelAssistantPart[] | null = null;
  let results = new Map<string, ModelToolResult>();
  let openCalls: string[] = [];
  let deferredUser: Content[] = [];

  const closeTurn = () => {
    if (assistant === null) return;
    messages.push({ role: "assistant", content: assistant });
    if (openCalls.length > 0) {
      messages.push({
        role: "tool",
        results: openCalls.map(
          (id) =>
            results.get(id) ?? {
              toolCallId: id,
              content: [{ type: "text", text: MISSING_RESULT }],
              isError: true,
            },
        ),
      });
    }
    for (const content of deferredUser) messages.push({ role: "user", content });
    assistant = null;
    results = new Map();
    openCalls = [];
    deferredUser = [];
  };
  const allAnswered = () => openCalls.every((id) => results.has(id));
  const addCall = (id: string, name: string, input: Record<string, unknown>) => {
    if (assistant === null || (openCalls.length > 0 && allAnswered())) {
      closeTurn();
      assistant = [];
    }
    assistant.push({ type: "tool_call", id, name, input });
    openCalls.push(id);
  };
  const addResult = (id: string, content: Content, isError: boolean) => {
    if (openCalls.includes(id)) results.set(id, { toolCallId: id, content, isError });
  };

  for (const event of events) {
    switch (event.type) {
      case "user.message":
        if (assistant !== null && !allAnswered()) deferredUser.push(event.content);
        else {
          closeTurn();
          messages.push({ role: "user", content: event.content });
        }
        break;
      case "agent.message":
        if (assistant !== null && (openCalls.length > 0 || results.size > 0)) closeTurn();
        assistant ??= [];
        assistant.push(...event.content.filter((block) => block.type === "text"));
        break;
      case "agent.tool_use":
      case "agent.mcp_tool_use":
      case "agent.custom_tool_use":
        addCall(event.id, event.name, event.input);
        break;
      case "agent.tool_result":
        addResult(event.tool_use_id, event.content, event.is_error);
        break;
      case "agent.mcp_tool_result":
        addResult(event.mcp_tool_use_id, event.content, event.is_error);
        break;
      case "user.custom_tool_result":
        addResult(event.custom_tool_use_id, event.content, event.is_error ?? false);
        break;
      default:
        break;
    }
  }
  closeTurn();
  return messages;
}

/** A rough, provider-independent token estimate: about four characters a token. */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}

/**
 * Keeps the newest history that fits `budgetTokens`, cutting only at a user message so no tool result
 * loses the call it answers. The newest user turn is always kept.
 */
export function fitToBudget(messages: readonly ModelMessage[], budgetTokens: number): ModelMessage[] {
  let total = messages.reduce((sum, message) => sum + estimateTokens(message), 0);
  let start = 0;
  while (total > budgetTokens) {
    const next = messages.findIndex((message, index) => index > start && message.role === "user");
    if (next === -1) break;
    for (let index = start; index < next; index++) total -= estimateTokens(messages[index]);
    start = next;
  }
  return messages.slice(start);
}
