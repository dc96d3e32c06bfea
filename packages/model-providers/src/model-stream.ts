import { ModelError } from "./errors";
import type {
  ModelCallOptions,
  ModelClient,
  ModelDelta,
  ModelRequest,
  ModelResponse,
  ModelStopReason,
  ModelStreamEvent,
  ModelToolCall,
} from "./model-client";

/** Folds a stream into one response, handing deltas to `onDelta` on the way; throws what the stream throws. */
export async function collectModelStream(
  events: AsyncIterable<ModelStreamEvent>,
  onDelta?: (delta: ModelDelta) => void,
): Promise<ModelResponse> {
  let text = "";
  const toolCalls: ModelToolCall[] = [];
  for await (const event of events) {
    switch (event.type) {
      case "text_delta":
        text += event.text;
        onDelta?.(event);
        break;
      case "tool_input_delta":
        onDelta?.(event);
        break;
      case "tool_call": {
        const { type: _, ...call } = event;
        toolCalls.push(call);
        break;
      }
      case "message_end":
        return { text, toolCalls, stopReason: event.stopReason, usage: event.usage };
    }
  }
  throw new ModelError("model_request_failed", "the model stream ended without message_end");
}

export function defineModelClient(
  provider: ModelClient["provider"],
  stream: (request: ModelRequest, options: ModelCallOptions) => AsyncIterable<ModelStreamEvent>,
): ModelClient {
  return {
    provider,
    stream: (request, options = {}) => stream(request, options),
    complete: (request, options = {}) => collectModelStream(stream(request, options), options.onDelta),
  };
}

/**
 * Some OpenAI-compatible servers finish a turn that has tool calls with a plain "stop"; the calls are
 * what matters to the harness. A length stop is kept: the calls may be cut off.
 */
export function settleStopReason(reported: ModelStopReason, toolCallCount: number): ModelStopReason {
  return reported === "end_turn" && toolCallCount > 0 ? "tool_use" : reported;
}
