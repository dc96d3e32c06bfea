import { type TokenUsage, ZERO_USAGE } from "@wakeloop/contracts";
import { ModelError } from "../errors";
import type {
  ModelClient,
  ModelRequest,
  ModelStopReason,
  ModelStreamEvent,
  ModelToolCall,
} from "../model-client";
import { defineModelClient } from "../model-stream";

export type ScriptedTurn =
  | {
      text?: string;
      toolCalls?: Array<Omit<ModelToolCall, "id"> & { id?: string }>;
      /** Defaults to tool_use when there are tool calls, else end_turn. */
      stopReason?: ModelStopReason;
      usage?: Partial<TokenUsage>;
    }
  | { error: ModelError };

export interface ScriptedModel extends ModelClient {
  /** Every request the port received, in order. */
  readonly requests: readonly ModelRequest[];
  enqueue(...turns: ScriptedTurn[]): void;
}

/**
 * An in-process ModelClient that answers from a queue of turns, for unit tests of code that talks
 * to the port. Wire-level behaviour (SDKs, HTTP, SSE) is covered by `@wakeloop/fake-model` instead.
 * An empty queue answers "ok". `provider` only sets what the client reports itself as.
 */
export function scriptedModel(
  turns: ScriptedTurn[] = [],
  { provider = "anthropic" }: { provider?: ModelClient["provider"] } = {},
): ScriptedModel {
  const queue = [...turns];
  const requests: ModelRequest[] = [];
  let callCount = 0;

  async function* play(
    turn: ScriptedTurn,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ModelStreamEvent> {
    const stopIfAborted = () => {
      if (signal?.aborted) throw new ModelError("model_aborted", "the model request was aborted");
    };
    stopIfAborted();
    if ("error" in turn) throw turn.error;
    if (turn.text) yield { type: "text_delta", index: 0, text: turn.text };
    const calls = turn.toolCalls ?? [];
    for (const call of calls) {
      stopIfAborted();
      callCount += 1;
      yield { type: "tool_call", ...call, id: call.id ?? `call_scripted_${callCount}` };
    }
    stopIfAborted();
    const stopReason = turn.stopReason ?? (calls.length > 0 ? "tool_use" : "end_turn");
    yield { type: "message_end", stopReason, usage: { ...ZERO_USAGE, ...turn.usage } };
  }

  const client = defineModelClient(provider, (request, { signal }) => {
    requests.push(request);
    return play(queue.shift() ?? { text: "ok" }, signal);
  });
  return {
    ...client,
    requests,
    enqueue: (...more) => {
      queue.push(...more);
    },
  };
}
