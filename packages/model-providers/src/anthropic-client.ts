import Anthropic from "@anthropic-ai/sdk";
import type { Stream } from "@anthropic-ai/sdk/streaming";
import { type TokenUsage, ZERO_USAGE } from "@wakeloop/contracts";
import type { Fetch } from "@wakeloop/egress";
import { toAnthropicBody } from "./anthropic-request";
import { ModelError, toModelError } from "./errors";
import type {
  ModelCallOptions,
  ModelClient,
  ModelRequest,
  ModelStopReason,
  ModelStreamEvent,
} from "./model-client";
import { defineModelClient, settleStopReason } from "./model-stream";
import { parseToolCallInput } from "./tool-call-input";

export interface AnthropicClientOptions {
  apiKey: string;
  baseURL?: string;
  /** Per request; the SDK's default is ten minutes. */
  timeoutMs?: number;
  /** Replaces the global fetch, e.g. with the egress guard's. */
  fetch?: Fetch;
}

function stopReasonOf(reason: Anthropic.StopReason | null): ModelStopReason {
  switch (reason) {
    case "tool_use":
      return "tool_use";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens";
    default:
      return "end_turn";
  }
}

type UsageFields = Partial<Record<keyof TokenUsage, number | null>>;

/** Message deltas repeat cumulative counts; a null means "unchanged", not zero. */
function mergeUsage(usage: TokenUsage, update: UsageFields): TokenUsage {
  const next = { ...usage };
  for (const key of Object.keys(next) as Array<keyof TokenUsage>) {
    const value = update[key];
    if (typeof value === "number") next[key] = value;
  }
  return next;
}

async function* streamMessages(
  client: Anthropic,
  request: ModelRequest,
  { signal }: ModelCallOptions,
): AsyncGenerator<ModelStreamEvent> {
  let usage: TokenUsage = ZERO_USAGE;
  let stopReason: ModelStopReason | undefined;
  let toolCallCount = 0;
  const toolBlocks = new Map<number, { id: string; name: string; json: string }>();
  try {
    // `messages.create` with the body already encoded (`toAnthropicBody`): the same request, without the
    // SDK's own call span (the harness's `chat` span covers the call).
    const events = await client.post<Stream<Anthropic.RawMessageStreamEvent>>("/v1/messages", {
      body: toAnthropicBody(request),
      headers: { "content-type": "application/json" },
      stream: true,
      signal,
    });
    for await (const event of events) {
      switch (event.type) {
        case "message_start":
          usage = mergeUsage(usage, event.message.usage);
          break;
        case "content_block_start": {
          const block = event.content_block;
          if (block.type === "tool_use")
            toolBlocks.set(event.index, { id: block.id, name: block.name, json: "" });
          else if (block.type === "text" && block.text !== "")
            yield { type: "text_delta", index: event.index, text: block.text };
          break;
        }
        case "content_block_delta": {
          const delta = event.delta;
          if (delta.type === "text_delta") yield { type: "text_delta", index: event.index, text: delta.text };
          else if (delta.type === "input_json_delta") {
            const block = toolBlocks.get(event.index);
            if (block === undefined || delta.partial_json === "") break;
            block.json += delta.partial_json;
            yield {
              type: "tool_input_delta",
              index: event.index,
              id: block.id,
              name: block.name,
              partialJson: delta.partial_json,
            };
          }
          break;
        }
        case "content_block_stop": {
          const block = toolBlocks.get(event.index);
          if (!block) break;
          toolBlocks.delete(event.index);
          toolCallCount += 1;
          yield { type: "tool_call", id: block.id, name: block.name, ...parseToolCallInput(block.json) };
          break;
        }
        case "message_delta":
          stopReason = stopReasonOf(event.delta.stop_reason);
          usage = mergeUsage(usage, event.usage);
          break;
        case "message_stop":
          break;
      }
    }
  } catch (error) {
    throw toModelError(error, signal);
  }
  // The SDK ends the iteration quietly when the request is aborted; the caller must still learn of it.
  if (signal?.aborted) throw toModelError(signal.reason, signal);
  if (stopReason === undefined) {
    throw new ModelError("model_request_failed", "the model stream ended before the message was complete");
  }
  yield { type: "message_end", stopReason: settleStopReason(stopReason, toolCallCount), usage };
}

/** Anthropic Messages API, streaming. The SDK's own retries are off: the harness owns retry policy. */
export function createAnthropicClient(options: AnthropicClientOptions): ModelClient {
  const client = new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
    ...(options.fetch !== undefined && { fetch: options.fetch }),
    maxRetries: 0,
  });
  return defineModelClient("anthropic", (request, callOptions) =>
    streamMessages(client, request, callOptions),
  );
}
