import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock } from "@wakeloop/contracts";
import { COMMA, pushJsonElements } from "./json-bytes";
import {
  type ModelMessage,
  type ModelRequest,
  type ModelToolSpec,
  type PromptCache,
  perMessage,
  perTool,
} from "./model-client";

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
  toWire(message).content.map((block) => Buffer.from(JSON.stringify(block))),
);
const toolBytes = perTool((tool) => Buffer.from(JSON.stringify(toolParam(tool))));

const TURN_START = {
  user: Buffer.from('{"role":"user","content":['),
  assistant: Buffer.from('{"role":"assistant","content":['),
};
const TURN_BETWEEN = Buffer.from("]},");
const TURN_END = Buffer.from("]}");

function cacheControl(cache: PromptCache): Anthropic.CacheControlEphemeral {
  return cache.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

/** A block's JSON object with `cache_control` as its last member: a breakpoint after that block. */
function withBreakpoint(block: Buffer, cache: PromptCache): Buffer {
  const member = Buffer.from(`,"cache_control":${JSON.stringify(cacheControl(cache))}}`);
  return Buffer.concat([block.subarray(0, -1), member]);
}

/**
 * `toAnthropicParams` as the UTF-8 JSON body the SDK sends: the same document, from cached pieces.
 * Members go in the order the API reads a prompt (tools, system, messages), so a request's bytes start
 * with the previous request's up to where the history grew; `cache_control` moves with the history's end.
 */
export function toAnthropicBody(request: ModelRequest): Buffer {
  const { cache } = request;
  const {
    tools: _tools,
    system,
    messages: _none,
    ...head
  } = toAnthropicParams({
    ...request,
    messages: [],
    tools: [],
  });
  const parts: Buffer[] = [Buffer.from(JSON.stringify(head).slice(0, -1))];
  if (request.tools.length > 0) {
    parts.push(Buffer.from(',"tools":['));
    const tools: Buffer[] = request.tools.map(toolBytes);
    const last = tools.length - 1;
    if (cache !== undefined) tools[last] = withBreakpoint(tools[last] as Buffer, cache);
    pushJsonElements(parts, tools);
    parts.push(Buffer.from("]"));
  }
  if (system !== undefined) parts.push(Buffer.from(`,"system":${JSON.stringify(system)}`));
  parts.push(Buffer.from(',"messages":['));
  const lastWithBlocks = request.messages.findLastIndex((message) => blockBytes(message).length > 0);
  let role: WireTurn["role"] | undefined;
  request.messages.forEach((message, index) => {
    const blocks = blockBytes(message);
    if (blocks.length === 0) return;
    const next = toWire(message).role;
    if (next === role) parts.push(COMMA);
    else parts.push(...(role === undefined ? [] : [TURN_BETWEEN]), TURN_START[next]);
    if (cache !== undefined && index === lastWithBlocks) {
      const last = blocks.length - 1;
      pushJsonElements(parts, [...blocks.slice(0, last), withBreakpoint(blocks[last] as Buffer, cache)]);
    } else pushJsonElements(parts, blocks);
    role = next;
  });
  if (role !== undefined) parts.push(TURN_END);
  parts.push(Buffer.from("]}"));
  return Buffer.concat(parts);
}

function toolParam(tool: ModelToolSpec): Anthropic.Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object" as const, ...tool.inputSchema },
  };
}

/** The last element with `cache_control` added; the rest are shared wire forms and stay untouched. */
function withLastMarked<T extends object>(items: T[], cache: PromptCache | undefined): T[] {
  const last = items.at(-1);
  if (cache === undefined || last === undefined) return items;
  return [...items.slice(0, -1), { ...last, cache_control: cacheControl(cache) }];
}

export function toAnthropicParams(request: ModelRequest): Anthropic.MessageCreateParamsStreaming {
  const { cache } = request;
  const messages = mergeTurns(request.messages.map(toWire));
  const lastTurn = messages.at(-1);
  // `mergeTurns` made the turns copies, so marking the last one's last block touches no shared form.
  if (lastTurn?.role === "user") lastTurn.content = withLastMarked(lastTurn.content, cache);
  if (lastTurn?.role === "assistant") lastTurn.content = withLastMarked(lastTurn.content, cache);
  return {
    model: request.model,
    max_tokens: request.maxOutputTokens,
    stream: true,
    ...(request.tools.length > 0 && { tools: withLastMarked(request.tools.map(toolParam), cache) }),
    ...(request.system !== "" && {
      system:
        cache === undefined
          ? request.system
          : [{ type: "text" as const, text: request.system, cache_control: cacheControl(cache) }],
    }),
    messages,
  };
}
