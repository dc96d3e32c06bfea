import { z } from "zod";

export type WireProtocol = "anthropic" | "openai";

/** A protocol-neutral reading of a model request, for `match` functions and default turns. */
export interface FakeRequestView {
  protocol: WireProtocol;
  model: string;
  stream: boolean;
  /** OpenAI only: `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Text of the latest user message that has any (tool results excluded); "" when none. */
  lastUserText: string;
  /** Results sent after the latest assistant message, in order. */
  toolResults: FakeToolResult[];
  /** Names of the tools the request offers, in its order. */
  toolNames: string[];
  /**
   * Whether the system prompt opens with SUMMARY_REQUEST_MARKER: the harness asks for a summary of
   * older history (context compaction). The server answers it with `summaryTurn` unless a scripted
   * turn's `match` accepts it.
   */
  summaryRequest: boolean;
  /**
   * Characters of prompt material (system, messages, tools), for the token estimate. Counted on first
   * read: it re-serialises the whole request, and a scripted turn with its own usage never asks.
   */
  readonly promptChars: number;
}

export interface FakeToolResult {
  toolCallId: string;
  /** Name of the call it answers, when that call is in the history. */
  name: string | undefined;
  text: string;
  /**
   * Anthropic's `is_error`. OpenAI has no such flag; there a result whose text starts with "Error:"
   * counts, the convention `@wakeloop/model-providers` writes failed results in.
   */
  isError: boolean;
}

const OPENAI_ERROR_PREFIX = "Error:";

const AnthropicTool = z.looseObject({ name: z.string() });
const OpenAITool = z.looseObject({ function: z.looseObject({ name: z.string() }) });

/** Names of the offered tools that have the shape `tool` names; others are not the fake's to judge. */
function namesOf<T>(tools: unknown[] | undefined, tool: z.ZodType<T>, name: (parsed: T) => string): string[] {
  return (tools ?? []).flatMap((entry) => {
    const parsed = tool.safeParse(entry);
    return parsed.success ? [name(parsed.data)] : [];
  });
}

/** The first line of the harness's summary requests (its `SUMMARY_REQUEST_MARKER`). */
export const SUMMARY_REQUEST_MARKER = "[context compaction]";

const Block = z.looseObject({ type: z.string() });
const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const ToolUseBlock = z.object({ type: z.literal("tool_use"), id: z.string(), name: z.string() });
const ToolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(Block)]).optional(),
  is_error: z.boolean().optional(),
});

const AnthropicRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(["user", "assistant"]),
        content: z.union([z.string(), z.array(Block)]),
      }),
    )
    .min(1),
  system: z.union([z.string(), z.array(Block)]).optional(),
  tools: z.array(z.unknown()).optional(),
  stream: z.boolean().optional(),
});

const OpenAIRequest = z.looseObject({
  model: z.string().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(["system", "developer", "user", "assistant", "tool"]),
        content: z.union([z.string(), z.array(Block), z.null()]).optional(),
        tool_call_id: z.string().optional(),
        tool_calls: z
          .array(z.looseObject({ id: z.string(), function: z.looseObject({ name: z.string() }) }))
          .optional(),
      }),
    )
    .min(1),
  tools: z.array(z.unknown()).optional(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
});

export type ParsedRequest = { ok: true; view: FakeRequestView } | { ok: false; message: string };

type Blocks = string | Array<z.infer<typeof Block>> | null | undefined;

function textOf(content: Blocks): string {
  if (typeof content === "string") return content;
  return (content ?? [])
    .flatMap((block) => {
      const text = TextPart.safeParse(block);
      return text.success ? [text.data.text] : [];
    })
    .join("");
}

/**
 * `view` with `promptChars` counted on first read (see FakeRequestView) from the body `bodyOf` gives:
 * the server passes its recording's lazy body, so a view kept for a request does not hold it parsed.
 */
function withPromptChars(view: Omit<FakeRequestView, "promptChars">, bodyOf: () => unknown): FakeRequestView {
  let chars: number | undefined;
  return {
    ...view,
    get promptChars() {
      if (chars === undefined) {
        const { system, messages, tools } = bodyOf() as Record<string, unknown>;
        chars = JSON.stringify([system ?? "", messages ?? [], tools ?? []]).length;
      }
      return chars;
    },
  };
}

function invalid(error: z.ZodError): ParsedRequest {
  return { ok: false, message: z.prettifyError(error) };
}

export function viewAnthropicRequest(body: unknown, bodyOf: () => unknown = () => body): ParsedRequest {
  const parsed = AnthropicRequest.safeParse(body);
  if (!parsed.success) return invalid(parsed.error);
  const { messages } = parsed.data;
  const names = new Map<string, string>();
  let lastAssistant = -1;
  messages.forEach((message, index) => {
    if (message.role !== "assistant") return;
    lastAssistant = index;
    if (typeof message.content === "string") return;
    for (const block of message.content) {
      const use = ToolUseBlock.safeParse(block);
      if (use.success) names.set(use.data.id, use.data.name);
    }
  });
  const toolResults = messages.slice(lastAssistant + 1).flatMap((message) =>
    typeof message.content === "string"
      ? []
      : message.content.flatMap((block) => {
          const result = ToolResultBlock.safeParse(block);
          if (!result.success) return [];
          const { tool_use_id, content, is_error } = result.data;
          return [
            {
              toolCallId: tool_use_id,
              name: names.get(tool_use_id),
              text: textOf(content),
              isError: !!is_error,
            },
          ];
        }),
  );
  return {
    ok: true,
    view: withPromptChars(
      {
        protocol: "anthropic",
        model: parsed.data.model,
        stream: parsed.data.stream === true,
        includeUsage: false,
        lastUserText: lastUserText(messages),
        toolResults,
        toolNames: namesOf(parsed.data.tools, AnthropicTool, (tool) => tool.name),
        summaryRequest: textOf(parsed.data.system).startsWith(SUMMARY_REQUEST_MARKER),
      },
      bodyOf,
    ),
  };
}

/** Text of the latest user message that has any; "" when none. */
function lastUserText(messages: ReadonlyArray<{ role: string; content?: Blocks }>): string {
  return (
    messages
      .filter((message) => message.role === "user")
      .map((message) => textOf(message.content))
      .findLast((text) => text.length > 0) ?? ""
  );
}

export function viewOpenAIRequest(body: unknown, bodyOf: () => unknown = () => body): ParsedRequest {
  const parsed = OpenAIRequest.safeParse(body);
  if (!parsed.success) return invalid(parsed.error);
  const { messages } = parsed.data;
  const names = new Map<string, string>();
  let lastAssistant = -1;
  messages.forEach((message, index) => {
    if (message.role !== "assistant") return;
    lastAssistant = index;
    for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  });
  const toolResults = messages.slice(lastAssistant + 1).flatMap((message) =>
    message.role === "tool" && message.tool_call_id !== undefined
      ? [
          {
            toolCallId: message.tool_call_id,
            name: names.get(message.tool_call_id),
            text: textOf(message.content),
            isError: textOf(message.content).startsWith(OPENAI_ERROR_PREFIX),
          },
        ]
      : [],
  );
  return {
    ok: true,
    view: withPromptChars(
      {
        protocol: "openai",
        model: parsed.data.model,
        stream: parsed.data.stream === true,
        includeUsage: parsed.data.stream_options?.include_usage === true,
        lastUserText: lastUserText(messages),
        toolResults,
        toolNames: namesOf(parsed.data.tools, OpenAITool, (tool) => tool.function.name),
        summaryRequest: messages.some(
          (message) =>
            (message.role === "system" || message.role === "developer") &&
            textOf(message.content).startsWith(SUMMARY_REQUEST_MARKER),
        ),
      },
      bodyOf,
    ),
  };
}
