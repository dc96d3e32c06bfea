import type { Content, TextBlock, TokenUsage } from "@wakeloop/contracts";

/** A tool as offered to the model; the caller has already normalized `inputSchema` for the provider. */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** OpenAI strict mode: the schema was normalized for it, so the model's arguments always match. */
  strict?: boolean;
}

export interface ModelToolCallPart {
  type: "tool_call";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ModelAssistantPart = TextBlock | ModelToolCallPart;

export interface ModelToolResult {
  toolCallId: string;
  content: Content;
  isError: boolean;
}

/** Provider-neutral history; each adapter translates it into its wire format. */
export type ModelMessage =
  | { role: "user"; content: Content }
  | { role: "assistant"; content: ModelAssistantPart[] }
  | { role: "tool"; results: ModelToolResult[] };

export interface ModelRequest {
  model: string;
  /** "" sends no system prompt. */
  system: string;
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  maxOutputTokens: number;
  /** Prompt caching; absent, the request asks for none (providers that cache by default still may). */
  cache?: PromptCache;
}

/**
 * How a request asks to be cached. Anthropic gets `cache_control` breakpoints after the tools, after
 * the system prompt and at the end of the history; OpenAI gets `key` as its `prompt_cache_key`.
 */
export interface PromptCache {
  /** Stable for everything that shares a prefix (the harness uses the session id). */
  key: string;
  /** Anthropic's cache lifetime; "5m" is the API's default and the cheaper write. */
  ttl: "5m" | "1h";
}

export type ModelStopReason = "end_turn" | "tool_use" | "max_tokens";

export interface ModelToolCall {
  id: string;
  name: string;
  /** The parsed arguments; `{}` when `inputError` is set. */
  input: Record<string, unknown>;
  /** Set when the model's arguments were not a JSON object; `raw` is the text it sent. */
  inputError?: { message: string; raw: string };
}

/** A piece of the answer as it arrives; `index` is the part's position as the provider numbers it. */
export type ModelDelta =
  | { type: "text_delta"; index: number; text: string }
  | { type: "tool_input_delta"; index: number; id: string; name: string; partialJson: string };

export type ModelStreamEvent =
  | ModelDelta
  | ({ type: "tool_call" } & ModelToolCall)
  | { type: "message_end"; stopReason: ModelStopReason; usage: TokenUsage };

export interface ModelCallOptions {
  /** Aborting ends the HTTP request and makes the stream throw a `model_aborted` ModelError. */
  signal?: AbortSignal;
  /** `complete` hands each delta here as it arrives, before the response is whole. */
  onDelta?: (delta: ModelDelta) => void;
}

export interface ModelResponse {
  text: string;
  toolCalls: ModelToolCall[];
  stopReason: ModelStopReason;
  usage: TokenUsage;
}

/**
 * The port the harness calls models through. `stream` yields text and tool arguments as they arrive,
 * each tool call once it is complete, and exactly one `message_end` last; every failure is thrown as a
 * ModelError.
 */
export interface ModelClient {
  readonly provider: "anthropic" | "openai";
  stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent>;
  complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse>;
}

/**
 * A message's wire form, converted once: a wake's history hands the same message objects to every
 * request (only the open turn is new), so each request converts only what is new. Wire forms are
 * shared between requests, so their users must not change them.
 */
export function perMessage<T>(convert: (message: ModelMessage) => T): (message: ModelMessage) => T {
  return convertedOnce(convert);
}

/** A tool spec's wire form, converted once: a wake's tool specs are the same objects from request to request. */
export function perTool<T>(convert: (tool: ModelToolSpec) => T): (tool: ModelToolSpec) => T {
  return convertedOnce(convert);
}

function convertedOnce<K extends object, T>(convert: (key: K) => T): (key: K) => T {
  const converted = new WeakMap<K, T>();
  return (key) => {
    let wire = converted.get(key);
    if (wire === undefined) {
      wire = convert(key);
      converted.set(key, wire);
    }
    return wire;
  };
}
