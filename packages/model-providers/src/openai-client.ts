import { type TokenUsage, ZERO_USAGE } from "@wakeloop/contracts";
import type { Fetch } from "@wakeloop/egress";
import OpenAI from "openai";
import type { Stream } from "openai/streaming";
import { ModelError, toModelError } from "./errors";
import type {
  ModelCallOptions,
  ModelClient,
  ModelRequest,
  ModelStopReason,
  ModelStreamEvent,
} from "./model-client";
import { defineModelClient, settleStopReason } from "./model-stream";
import { type MaxTokensField, toOpenAIBody } from "./openai-request";
import { requestSignal } from "./request-signal";
import { parseToolCallInput } from "./tool-call-input";

export interface OpenAIClientOptions {
  apiKey: string;
  /** Set for OpenAI-compatible servers (vLLM, Ollama, llama.cpp), including the `/v1` path. */
  baseURL?: string;
  /** Defaults to `max_completion_tokens`; compatible servers often know only `max_tokens`. */
  maxTokensField?: MaxTokensField;
  /**
   * Whether a request's cache key goes out as `prompt_cache_key` (default true). Off for compatible
   * servers: they cache prefixes on their own (vLLM's prefix caching), and strict ones refuse fields
   * they do not know.
   */
  promptCacheKey?: boolean;
  /** Per request; the SDK's default is ten minutes. */
  timeoutMs?: number;
  /** Replaces the global fetch, e.g. with the egress guard's. */
  fetch?: Fetch;
}

type FinishReason = OpenAI.ChatCompletionChunk.Choice["finish_reason"];

function stopReasonOf(reason: NonNullable<FinishReason>): ModelStopReason {
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    default:
      return "end_turn";
  }
}

/** OpenAI counts cached prompt tokens inside `prompt_tokens`; ours keeps them apart, as Anthropic does. */
function usageOf(usage: OpenAI.CompletionUsage): TokenUsage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: usage.prompt_tokens - cached,
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

async function* streamCompletion(
  client: OpenAI,
  request: ModelRequest,
  maxTokensField: MaxTokensField,
  { signal }: ModelCallOptions,
): AsyncGenerator<ModelStreamEvent> {
  // A server that ignores include_usage reports nothing; zero is then the honest answer.
  let usage: TokenUsage = ZERO_USAGE;
  let finishReason: FinishReason = null;
  const calls = new Map<number, { id: string; name: string; args: string }>();
  const linked = requestSignal(signal);
  try {
    // `chat.completions.create` with the body already encoded (`toOpenAIBody`): the same request.
    const chunks = await client.post<Stream<OpenAI.ChatCompletionChunk>>("/chat/completions", {
      body: toOpenAIBody(request, maxTokensField),
      headers: { "content-type": "application/json" },
      stream: true,
      signal: linked.signal,
    });
    for await (const chunk of chunks) {
      if (chunk.usage) usage = usageOf(chunk.usage);
      const choice = chunk.choices.find((candidate) => candidate.index === 0);
      if (!choice) continue;
      // Chat Completions has one text part (index 0); tool calls carry their own index.
      if (choice.delta.content) yield { type: "text_delta", index: 0, text: choice.delta.content };
      for (const delta of choice.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { id: "", name: "", args: "" };
        call.id ||= delta.id ?? "";
        call.name ||= delta.function?.name ?? "";
        const piece = delta.function?.arguments ?? "";
        call.args += piece;
        calls.set(delta.index, call);
        if (piece !== "")
          yield {
            type: "tool_input_delta",
            index: delta.index,
            id: call.id,
            name: call.name,
            partialJson: piece,
          };
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  } catch (error) {
    throw toModelError(error, signal);
  } finally {
    linked.release();
  }
  // The SDK ends the iteration quietly when the request is aborted; the caller must still learn of it.
  if (signal?.aborted) throw toModelError(signal.reason, signal);
  if (finishReason === null) {
    throw new ModelError("model_request_failed", "the model stream ended before a finish_reason");
  }
  // Arguments arrive in pieces across chunks, so a call is complete only once the choice finishes.
  const ordered = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  for (const call of ordered) {
    yield { type: "tool_call", id: call.id, name: call.name, ...parseToolCallInput(call.args) };
  }
  yield {
    type: "message_end",
    stopReason: settleStopReason(stopReasonOf(finishReason), ordered.length),
    usage,
  };
}

/** Chat Completions, streaming, for OpenAI and compatible servers. SDK retries are off: the harness owns them. */
export function createOpenAIClient(options: OpenAIClientOptions): ModelClient {
  const client = new OpenAI({
    apiKey: options.apiKey,
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
    ...(options.fetch !== undefined && { fetch: options.fetch }),
    maxRetries: 0,
  });
  const maxTokensField = options.maxTokensField ?? "max_completion_tokens";
  const keyed = options.promptCacheKey ?? true;
  return defineModelClient("openai", ({ cache, ...request }, callOptions) =>
    streamCompletion(client, keyed && cache ? { ...request, cache } : request, maxTokensField, callOptions),
  );
}
