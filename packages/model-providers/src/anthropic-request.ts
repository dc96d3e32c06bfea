import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock } from "@wakeloop/contracts";
import { COMMA, pushJsonElements } from "./json-bytes";
import { type ModelMessage, type ModelRequest, perMessage, perTool } from "./model-client";

type UserBlock = Anthropic.TextBlockParam | Anthropic.ImageBlockParam | Anthropic.ToolResultBlockParam;
type AssistantBlock = Anthropic.TextBlockParam | Anthropic.ToolUseBlockParam;

function contentBlock(block: ContentBlock): Anthropic.TextBlockParam | Anthropic.ImageBlockParam {
  if (block.type === "text") return { type: "text", text: block.text };
  return { type: "image", source: block.source };
}

/** Anthropic rejects empty text blocks, which stored history can contain (e.g. a text-less tool turn). */
function nonEmpty<T extends { type: string }>(blocks: T[]): T[] {
  return blocks.filter((block) => !("text" in block) || block.text !== "");
}

type WireTurn = { role: "user"; content: UserBlock[] } | { role: "assistant"; content: AssistantBlock[] };

const toWire = perMessage((message: ModelMessage): WireTurn => {
  switch (message.role) {
    case "user":
      return { role: "user", content: nonEmpty(message.content.map(contentBlock)) };
    case "assistant":
      return {
        role: "assistant",
        content: nonEmpty(
          message.content.map(
            (part): AssistantBlock =>
              part.type === "text"
                ? { type: "text", text: part.text }
                : { type: "tool_use", id: part.id, name: part.name, input: part.input },
          ),
        ),
      };
    case "tool":
      return {
        role: "user",
        content: message.results.map((result) => ({
          type: "tool_result",
          tool_use_id: result.toolCallId,
          is_error: result.isError,
          ...(result.content.length > 0 && { content: nonEmpty(result.content.map(contentBlock)) }),
        })),
      };
  }
});

/**
 * Tool results travel in a user message, so results followed by new user input become one user
 * message with the results first, which is the order the API requires.
 */
function mergeTurns(turns: WireTurn[]): WireTurn[] {
  const merged: WireTurn[] = [];
  for (const turn of turns) {
    if (turn.content.length === 0) continue;
    const previous = merged.at(-1);
    if (previous?.role === "user" && turn.role === "user") previous.content.push(...turn.content);
    else if (previous?.role === "assistant" && turn.role === "assistant")
      previous.content.push(...turn.content);
    // Wire turns are shared between requests (`perMessage`): extend a copy, never the original.
    else merged.push(copyOf(turn));
  }
  return merged;
}

/** A turn whose content can be extended without touching the shared original. */
function copyOf(turn: WireTurn): WireTurn {
  // Spelled per role: a spread of the union would not keep each role's block type.
  return turn.role === "user"
    ? { role: "user", content: [...turn.content] }
    : { role: "assistant", content: [...turn.content] };
}

// Each history message's content blocks as JSON, encoded once per wake like its wire form. Adjacent
// turns of one role merge into one wire message (`mergeTurns`), so a message's bytes are its blocks
// alone, placed in whichever merged turn they land: a request's body is then mostly copies of bytes made
// for earlier requests, not a JSON.stringify and UTF-8 encoding of the whole history each time.
const blockBytes = perMessage((message: ModelMessage) =>
  Buffer.from(
    toWire(message)
      .content.map((block) => JSON.stringify(block))
      .join(","),
  ),
);
const toolBytes = perTool((tool) => {
  const [wire] =
    toAnthropicParams({ model: "", system: "", messages: [], tools: [tool], maxOutputTokens: 0 }).tools ?? [];
  return Buffer.from(JSON.stringify(wire));
});

const TURN_START = {
  user: Buffer.from('{"role":"user","content":['),
  assistant: Buffer.from('{"role":"assistant","content":['),
};
const TURN_BETWEEN = Buffer.from("]},");
const TURN_END = Buffer.from("]}");

/** `toAnthropicParams` as the UTF-8 JSON body the SDK sends: the same document, from cached pieces. */
export function toAnthropicBody(request: ModelRequest): Buffer {
  const { messages: _none, ...head } = toAnthropicParams({ ...request, messages: [], tools: [] });
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"messages":[`)];
  let role: WireTurn["role"] | undefined;
  for (const message of request.messages) {
    const blocks = blockBytes(message);
    if (blocks.length === 0) continue;
    const next = toWire(message).role;
    if (next === role) parts.push(COMMA);
    else parts.push(...(role === undefined ? [] : [TURN_BETWEEN]), TURN_START[next]);
    parts.push(blocks);
    role = next;
  }
  if (role !== undefined) parts.push(TURN_END);
  if (request.tools.length > 0) {
    parts.push(Buffer.from('],"tools":['));
    pushJsonElements(parts, request.tools.map(toolBytes));
  }
  parts.push(Buffer.from("]}"));
  return Buffer.concat(parts);
}

export function toAnthropicParams(request: ModelRequest): Anthropic.MessageCreateParamsStreaming {
  return {
    model: request.model,
    max_tokens: request.maxOutputTokens,
    ...(request.system !== "" && { system: request.system }),
    messages: mergeTurns(request.messages.map(toWire)),
    ...(request.tools.length > 0 && {
      tools: request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: { type: "object" as const, ...tool.inputSchema },
      })),
    }),
    stream: true,
  };
}
