import type { ContentBlock } from "@wakeloop/contracts";
import type OpenAI from "openai";
import { pushJsonElements } from "./json-bytes";
import { type ModelMessage, type ModelRequest, perMessage, perTool } from "./model-client";

type Message = OpenAI.ChatCompletionMessageParam;

/** Which field carries the output limit: OpenAI's current one, or the one compatible servers know. */
export type MaxTokensField = "max_completion_tokens" | "max_tokens";

function imagePart(block: Extract<ContentBlock, { type: "image" }>): OpenAI.ChatCompletionContentPartImage {
  const { source } = block;
  const url = source.type === "url" ? source.url : `data:${source.media_type};base64,${source.data}`;
  return { type: "image_url", image_url: { url } };
}

function textOf(content: ContentBlock[]): string {
  return content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

/** Plain string when there is no image: every compatible server accepts that form. */
function userContent(content: ContentBlock[]): OpenAI.ChatCompletionUserMessageParam["content"] {
  if (content.every((block) => block.type === "text")) return textOf(content);
  return content.map((block) =>
    block.type === "text" ? { type: "text", text: block.text } : imagePart(block),
  );
}

const toWire = perMessage((message: ModelMessage): Message[] => {
  switch (message.role) {
    case "user":
      return [{ role: "user", content: userContent(message.content) }];
    case "assistant": {
      const text = message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      const toolCalls = message.content.flatMap((part) =>
        part.type === "tool_call"
          ? [
              {
                id: part.id,
                type: "function" as const,
                function: { name: part.name, arguments: JSON.stringify(part.input) },
              },
            ]
          : [],
      );
      return [
        {
          role: "assistant",
          content: text === "" ? null : text,
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
      ];
    }
    case "tool": {
      // Chat Completions has no is_error flag and tool messages carry text only: errors are said in
      // words, and images follow in a user message, the one place the protocol accepts them.
      const results: Message[] = message.results.map((result) => ({
        role: "tool",
        tool_call_id: result.toolCallId,
        content: result.isError ? `Error: ${textOf(result.content)}` : textOf(result.content),
      }));
      const images = message.results.flatMap((result) =>
        result.content.flatMap((block) =>
          block.type === "image"
            ? [
                { type: "text" as const, text: `Image from tool call ${result.toolCallId}:` },
                imagePart(block),
              ]
            : [],
        ),
      );
      return images.length > 0 ? [...results, { role: "user", content: images }] : results;
    }
  }
});

// Each history message's JSON, encoded once per wake like its wire form: a request's body is then
// mostly copies of bytes made for earlier requests, not a JSON.stringify and UTF-8 encoding of the
// whole history and every tool schema each time (the largest cost of a step in the worker's profile).
const messageBytes = perMessage((message: ModelMessage) =>
  Buffer.from(
    toWire(message)
      .map((wire) => JSON.stringify(wire))
      .join(","),
  ),
);
// A wake's tool specs are the same objects from request to request (build-request's per-wake tool set).
const toolBytes = perTool((tool) => {
  const [wire] =
    toOpenAIParams({ model: "", system: "", messages: [], tools: [tool], maxOutputTokens: 0 }, "max_tokens")
      .tools ?? [];
  return Buffer.from(JSON.stringify(wire));
});

/**
 * `toOpenAIParams` as the UTF-8 JSON body the SDK sends: the same document, from cached pieces. Tools go
 * before messages, so a request's bytes start with the previous request's up to where the history grew.
 */
export function toOpenAIBody(request: ModelRequest, maxTokensField: MaxTokensField): Buffer {
  const { messages: _none, ...head } = toOpenAIParams(
    { ...request, system: "", messages: [], tools: [] },
    maxTokensField,
  );
  const messages = request.messages.map(messageBytes).filter((bytes) => bytes.length > 0);
  if (request.system !== "")
    messages.unshift(Buffer.from(JSON.stringify({ role: "system", content: request.system })));
  const parts: Buffer[] = [Buffer.from(JSON.stringify(head).slice(0, -1))];
  if (request.tools.length > 0) {
    parts.push(Buffer.from(',"tools":['));
    pushJsonElements(parts, request.tools.map(toolBytes));
    parts.push(Buffer.from("]"));
  }
  parts.push(Buffer.from(',"messages":['));
  pushJsonElements(parts, messages);
  parts.push(Buffer.from("]}"));
  return Buffer.concat(parts);
}

export function toOpenAIParams(
  request: ModelRequest,
  maxTokensField: MaxTokensField,
): OpenAI.ChatCompletionCreateParamsStreaming {
  return {
    model: request.model,
    [maxTokensField]: request.maxOutputTokens,
    messages: [
      ...(request.system !== "" ? [{ role: "system" as const, content: request.system }] : []),
      ...request.messages.flatMap(toWire),
    ],
    ...(request.tools.length > 0 && {
      tools: request.tools.map((tool) => ({
        type: "function" as const,
        function: {
          name: tool.name,
          description: tool.description,
          parameters: tool.inputSchema,
          ...(tool.strict && { strict: true }),
        },
      })),
    }),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.cache !== undefined && { prompt_cache_key: request.cache.key }),
  };
}
