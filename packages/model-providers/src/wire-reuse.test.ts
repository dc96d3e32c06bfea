import { describe, expect, it } from "vitest";
import { toAnthropicParams } from "./anthropic-request";
import type { ModelMessage, ModelRequest } from "./model-client";
import { toOpenAIBody, toOpenAIParams } from "./openai-request";

const history: ModelMessage[] = [
  { role: "user", content: [{ type: "text", text: "first" }] },
  { role: "user", content: [{ type: "text", text: "second" }] },
  { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "get_state", input: { key: "k" } }] },
  { role: "tool", results: [{ toolCallId: "c1", content: [{ type: "text", text: "v" }], isError: false }] },
];
const request = (messages: ModelMessage[]): ModelRequest => ({
  model: "m",
  system: "",
  messages,
  tools: [],
  maxOutputTokens: 10,
});

describe("wire forms shared between requests", () => {
  it("build the same request again and again from the same history", () => {
    const first = JSON.stringify(toAnthropicParams(request(history)));
    expect(JSON.stringify(toAnthropicParams(request(history)))).toBe(first);
    // Merging the two user turns did not grow the shared wire form of either.
    expect(toAnthropicParams(request(history.slice(0, 1))).messages[0]?.content).toHaveLength(1);
    const openai = JSON.stringify(toOpenAIParams(request(history), "max_tokens"));
    expect(JSON.stringify(toOpenAIParams(request(history), "max_tokens"))).toBe(openai);
  });

  it("encode the OpenAI body from cached pieces as the same document as the params", () => {
    const tools = [
      { name: "get_state", description: 'Reads "state"', inputSchema: { type: "object", properties: {} } },
      { name: "set_state", description: "Writes", inputSchema: { type: "object" }, strict: true },
    ];
    const withImage: ModelMessage = {
      role: "tool",
      results: [
        {
          toolCallId: "c2",
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }],
          isError: true,
        },
      ],
    };
    const cases: ModelRequest[] = [
      request([]),
      { ...request(history), system: "Be brief. ✓", tools },
      { ...request([...history, withImage]), tools: tools.slice(0, 1) },
    ];
    for (const each of cases) {
      const body = toOpenAIBody(each, "max_completion_tokens");
      expect(JSON.parse(body.toString("utf8"))).toEqual(toOpenAIParams(each, "max_completion_tokens"));
      expect(toOpenAIBody(each, "max_completion_tokens").equals(body)).toBe(true);
    }
  });
});
