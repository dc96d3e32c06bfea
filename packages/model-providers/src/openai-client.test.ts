import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { historyRequest } from "./history.fixture";
import { createOpenAIClient } from "./openai-client";

let fake: FakeModelServer;
beforeEach(async () => {
  fake = await startFakeModelServer();
});
afterEach(async () => {
  await fake.close();
});

describe("createOpenAIClient", () => {
  it("sends the history as Chat Completions messages, one tool message per result", async () => {
    await createOpenAIClient({ apiKey: "test-key", baseURL: `${fake.url}/v1` }).complete(historyRequest);
    const [sent] = fake.requests;
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe("Bearer test-key");
    expect(sent?.body).toEqual({
      model: "fake-model",
      max_completion_tokens: 512,
      stream: true,
      stream_options: { include_usage: true },
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Weather for a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
      messages: [
        { role: "system", content: "Be helpful." },
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          ],
        },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
            {
              id: "call_2",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Atlantis"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "18C" },
        { role: "tool", tool_call_id: "call_2", content: "Error: unknown city" },
        {
          role: "user",
          content: [
            { type: "text", text: "Image from tool call call_1:" },
            { type: "image_url", image_url: { url: "https://example.com/map.png" } },
          ],
        },
        { role: "user", content: "And tomorrow?" },
      ],
    });
    expect(sent?.view?.toolResults.map((result) => [result.name, result.isError])).toEqual([
      ["get_weather", false],
      ["get_weather", true],
    ]);
  });

  it("uses max_tokens for compatible servers and sends a text-only assistant turn without tool_calls", async () => {
    const client = createOpenAIClient({
      apiKey: "k",
      baseURL: `${fake.url}/v1`,
      maxTokensField: "max_tokens",
    });
    await client.complete({
      model: "local",
      system: "",
      maxOutputTokens: 64,
      tools: [],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "text", text: "hello" }] },
        { role: "user", content: [{ type: "text", text: "bye" }] },
      ],
    });
    expect(fake.requests[0]?.body).toEqual({
      model: "local",
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "user", content: "bye" },
      ],
    });
  });

  it("sends the cache key as prompt_cache_key and reports cached prompt tokens apart from the rest", async () => {
    const client = createOpenAIClient({ apiKey: "test-key", baseURL: `${fake.url}/v1` });
    const request = {
      ...historyRequest,
      system: "Be helpful. ".repeat(500),
      cache: { key: "session-1", ttl: "5m" as const },
    };
    const first = await client.complete(request);
    expect((fake.requests[0]?.body as Record<string, unknown> | undefined)?.prompt_cache_key).toBe(
      "session-1",
    );
    expect(first.usage.cache_read_input_tokens).toBe(0);
    const second = await client.complete({
      ...request,
      messages: [...request.messages, { role: "assistant", content: [{ type: "text", text: "Sunny." }] }],
    });
    expect(second.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(1_024);
    expect(second.usage.cache_read_input_tokens % 128).toBe(0);
    // input_tokens is the uncached rest, as Anthropic reports it.
    expect(second.usage.input_tokens + second.usage.cache_read_input_tokens).toBeGreaterThan(
      first.usage.input_tokens,
    );
  });
});
