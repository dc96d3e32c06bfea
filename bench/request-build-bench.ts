import { type LatencySummary, summarize } from "@wakeloop/testing";
import { managedTools, providerTools } from "@wakeloop/tool-runtime";
import { toAnthropicBody, toAnthropicParams } from "../packages/model-providers/src/anthropic-request";
import type { ModelMessage, ModelRequest } from "../packages/model-providers/src/model-client";

/*
 * The worker's CPU for one Anthropic model request's body, the step of a tool loop at its 50th turn:
 * the history's first 49 turns were sent before in the same wake (their wire forms and bytes cached),
 * the 50th is new. "SDK stringify" is what `messages.create` does with the params (JSON.stringify of the
 * whole body, then UTF-8 encoding by fetch); "cached bytes" is `toAnthropicBody`. Both start from the
 * same warm per-message wire forms, so the difference is the encoding alone.
 */

const SYSTEM = `You are a careful assistant for the operations team. ${"Follow the runbook. ".repeat(100)}`;

/** One tool-loop turn: the model's text and state-tool call, its result, and the user's next line. */
function turn(index: number): ModelMessage[] {
  const id = `toolu_${index.toString().padStart(6, "0")}`;
  return [
    {
      role: "assistant",
      content: [
        { type: "text", text: `Step ${index}: recording the progress so far before the next check.` },
        { type: "tool_call", id, name: "set_state", input: { key: `step-${index}`, value: { done: index } } },
      ],
    },
    {
      role: "tool",
      results: [
        {
          toolCallId: id,
          content: [{ type: "text", text: `{"ok":true,"key":"step-${index}"}` }],
          isError: false,
        },
      ],
    },
    { role: "user", content: [{ type: "text", text: `Continue with item ${index + 1} of the list.` }] },
  ];
}

function history(turns: number): ModelMessage[] {
  const messages: ModelMessage[] = [
    { role: "user", content: [{ type: "text", text: "Work through the list." }] },
  ];
  for (let index = 1; index <= turns; index++) messages.push(...turn(index));
  return messages;
}

export interface RequestBuildBench {
  turns: number;
  tools: number;
  bodyBytes: number;
  sdkStringifyMs: LatencySummary;
  cachedBytesMs: LatencySummary;
}

export function runRequestBuildBench({ iterations = 2_000, turns = 50 } = {}): RequestBuildBench {
  const tools = providerTools(managedTools, "anthropic");
  const request = (messages: ModelMessage[]): ModelRequest => ({
    model: "claude-bench",
    system: SYSTEM,
    messages,
    tools,
    maxOutputTokens: 4_096,
  });
  const encodings = {
    sdkStringify: (each: ModelRequest) => Buffer.from(JSON.stringify(toAnthropicParams(each))),
    cachedBytes: toAnthropicBody,
  };
  const samples: Record<keyof typeof encodings, number[]> = { sdkStringify: [], cachedBytes: [] };
  let bodyBytes = 0;
  for (let index = 0; index < iterations; index++) {
    // Alternate the order so that neither encoding always runs on a warmer heap than the other.
    const order =
      index % 2 === 0
        ? (["sdkStringify", "cachedBytes"] as const)
        : (["cachedBytes", "sdkStringify"] as const);
    for (const name of order) {
      const encode = encodings[name];
      // Fresh message objects for each request, as a new wake's history: the earlier requests of the wake
      // sent (and so converted) the first turns, and the last turn is new to this request.
      const earlier = history(turns - 1);
      encode(request(earlier));
      const full = request([...earlier, ...turn(turns)]);
      const before = performance.now();
      const body = encode(full);
      samples[name].push(performance.now() - before);
      bodyBytes = body.length;
    }
  }
  // The first tenth warms the JIT.
  const measured = (values: number[]) => summarize(values.slice(Math.floor(iterations / 10)));
  return {
    turns,
    tools: tools.length,
    bodyBytes,
    sdkStringifyMs: measured(samples.sdkStringify),
    cachedBytesMs: measured(samples.cachedBytes),
  };
}
