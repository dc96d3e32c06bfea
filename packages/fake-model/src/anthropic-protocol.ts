import type { PlannedToolCall, ReplyPlan, StreamFailure, StreamFrame } from "./reply-plan";

/** Anthropic Messages API wire shapes: what `POST /v1/messages` and `GET /v1/models` return. */

/** As the API reports it: `input_tokens` is what neither the cache served nor took (the uncached rest). */
function usageBody(plan: ReplyPlan) {
  const { readTokens, creationTokens, creationTtl } = plan.cache;
  return {
    input_tokens: plan.usage.input_tokens - readTokens - creationTokens,
    output_tokens: plan.usage.output_tokens,
    cache_creation_input_tokens: creationTokens,
    cache_read_input_tokens: readTokens,
    cache_creation: {
      ephemeral_5m_input_tokens: creationTtl === "5m" ? creationTokens : 0,
      ephemeral_1h_input_tokens: creationTtl === "1h" ? creationTokens : 0,
    },
  };
}

function sse(type: string, data: Record<string, unknown> = {}): StreamFrame {
  return {
    text: `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`,
    output: type === "content_block_delta",
  };
}

/** A scripted `rawInput` that is not JSON has no faithful non-streaming form; send it as a string. */
function parsedInput(call: PlannedToolCall): unknown {
  try {
    return JSON.parse(call.arguments);
  } catch {
    return call.arguments;
  }
}

export function anthropicMessage(plan: ReplyPlan, model: string, id: string) {
  const text = plan.textChunks.join("");
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content: [
      ...(text.length > 0 ? [{ type: "text", text }] : []),
      ...plan.toolCalls.map((call) => ({
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: parsedInput(call),
      })),
    ],
    stop_reason: plan.stopReason,
    stop_sequence: null,
    usage: usageBody(plan),
  };
}

/**
 * The exact event sequence of a streamed message, one SSE frame per element. With `failure`, the
 * stream breaks off after the text with an `error` event, as the API does when it fails mid-answer.
 */
export function anthropicStreamFrames(
  plan: ReplyPlan,
  model: string,
  id: string,
  failure?: StreamFailure,
): StreamFrame[] {
  const message = { id, type: "message", role: "assistant", model, content: [] };
  const start = sse("message_start", {
    message: {
      ...message,
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usageBody(plan), output_tokens: 1 },
    },
  });
  const blocks: StreamFrame[][] = [];
  if (plan.textChunks.length > 0) {
    const index = blocks.length;
    blocks.push([
      sse("content_block_start", { index, content_block: { type: "text", text: "" } }),
      ...plan.textChunks.map((text) =>
        sse("content_block_delta", { index, delta: { type: "text_delta", text } }),
      ),
    ]);
  }
  if (failure) return [start, sse("ping"), ...blocks.flat(), sse("error", { error: failure })];
  for (const call of plan.toolCalls) {
    const index = blocks.length;
    blocks.push([
      sse("content_block_start", {
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      }),
      ...call.argumentChunks.map((partial_json) =>
        sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }),
      ),
    ]);
  }
  return [
    start,
    sse("ping"),
    ...blocks.flatMap((frames, index) => [...frames, sse("content_block_stop", { index })]),
    sse("message_delta", {
      delta: { stop_reason: plan.stopReason, stop_sequence: null },
      usage: usageBody(plan),
    }),
    sse("message_stop"),
  ];
}

export function anthropicErrorBody(type: string, message: string) {
  return { type: "error", error: { type, message } };
}

export function anthropicModels(models: readonly string[]) {
  return {
    data: models.map((id) => ({ type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" })),
    has_more: false,
    first_id: models[0] ?? null,
    last_id: models.at(-1) ?? null,
  };
}
