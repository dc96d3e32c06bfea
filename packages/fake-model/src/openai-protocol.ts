import type { ReplyPlan, StreamFailure, StreamFrame } from "./reply-plan";

/** OpenAI Chat Completions wire shapes: what `POST /v1/chat/completions` and `GET /v1/models` return. */

const FINISH_REASON = { end_turn: "stop", tool_use: "tool_calls", max_tokens: "length" } as const;

/** `prompt_tokens` counts the cached ones too; `prompt_tokens_details` says how many were. */
function usageBody(plan: ReplyPlan) {
  const { input_tokens, output_tokens } = plan.usage;
  return {
    prompt_tokens: input_tokens,
    completion_tokens: output_tokens,
    total_tokens: input_tokens + output_tokens,
    prompt_tokens_details: { cached_tokens: plan.cache.readTokens, audio_tokens: 0 },
  };
}

export interface CompletionIdentity {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

export function openaiCompletion(plan: ReplyPlan, identity: CompletionIdentity) {
  const text = plan.textChunks.join("");
  return {
    ...identity,
    object: "chat.completion",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text.length > 0 ? text : null,
          refusal: null,
          ...(plan.toolCalls.length > 0 && {
            tool_calls: plan.toolCalls.map((call) => ({
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: call.arguments },
            })),
          }),
        },
        logprobs: null,
        finish_reason: FINISH_REASON[plan.stopReason],
      },
    ],
    usage: usageBody(plan),
  };
}

/**
 * One `data:` frame per chunk, ending with `[DONE]`. With `include_usage`, every chunk carries
 * `usage: null` and a last chunk with no choices carries the totals, as the real API does. With
 * `failure`, the stream breaks off after the text with a `data: {"error": …}` frame.
 */
export function openaiStreamFrames(
  plan: ReplyPlan,
  identity: CompletionIdentity,
  includeUsage: boolean,
  failure?: StreamFailure,
): StreamFrame[] {
  const frame = (data: unknown, output = false): StreamFrame => ({
    text: `data: ${JSON.stringify(data)}\n\n`,
    output,
  });
  const chunk = (
    delta: Record<string, unknown>,
    { output = false, finishReason = null as string | null } = {},
  ) =>
    frame(
      {
        ...identity,
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        ...(includeUsage && { usage: null }),
      },
      output,
    );
  const frames = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const content of plan.textChunks) frames.push(chunk({ content }, { output: true }));
  if (failure) return [...frames, frame({ error: { ...failure, param: null, code: failure.type } })];
  plan.toolCalls.forEach((call, index) => {
    frames.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const piece of call.argumentChunks) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, { output: true }));
    }
  });
  frames.push(chunk({}, { finishReason: FINISH_REASON[plan.stopReason] }));
  if (includeUsage) {
    frames.push(frame({ ...identity, object: "chat.completion.chunk", choices: [], usage: usageBody(plan) }));
  }
  frames.push({ text: "data: [DONE]\n\n", output: false });
  return frames;
}

export function openaiErrorBody(type: string, message: string) {
  return { error: { message, type, param: null, code: type } };
}

export function openaiModels(models: readonly string[], created: number) {
  return {
    object: "list",
    data: models.map((id) => ({ id, object: "model", created, owned_by: "wakeloop-fake" })),
  };
}
