import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicClient } from "./anthropic-client";
import { historyRequest } from "./history.fixture";

let fake: FakeModelServer;
beforeEach(async () => {
  fake = await startFakeModelServer();
});
afterEach(async () => {
  await fake.close();
});

const client = () => createAnthropicClient({ apiKey: "test-key", baseURL: fake.url });

describe("createAnthropicClient", () => {
  it("sends the history as Messages API blocks, tool results first in the following user turn", async () => {
    await client().complete(historyRequest);
    const [sent] = fake.requests;
    expect(sent?.path).toBe("/v1/messages");
    // Recent SDK versions send the key as a bearer token; older ones used x-api-key.
    expect(sent?.headers["x-api-key"] ?? sent?.headers.authorization).toMatch(/test-key$/);
    expect(sent?.headers["anthropic-version"]).toBeDefined();
    expect(sent?.body).toEqual({
      model: "fake-model",
      max_tokens: 512,
      system: "Be helpful.",
      stream: true,
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Weather in Paris?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Atlantis" } },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "call_1",
              is_error: false,
              content: [
                { type: "text", text: "18C" },
                { type: "image", source: { type: "url", url: "https://example.com/map.png" } },
              ],
            },
            {
              type: "tool_result",
              tool_use_id: "call_2",
              is_error: true,
              content: [{ type: "text", text: "unknown city" }],
            },
            { type: "text", text: "And tomorrow?" },
          ],
        },
      ],
    });
    expect(sent?.view?.toolResults.map((result) => [result.name, result.isError])).toEqual([
      ["get_weather", false],
      ["get_weather", true],
    ]);
  });

  it("leaves out what the API rejects: empty text blocks, empty system prompt, empty tool list", async () => {
    await client().complete({
      model: "fake-model",
      system: "",
      maxOutputTokens: 10,
      tools: [],
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "" },
            { type: "tool_call", id: "t1", name: "noop", input: {} },
          ],
        },
        { role: "tool", results: [{ toolCallId: "t1", content: [], isError: false }] },
      ],
    });
    expect(fake.requests[0]?.body).toEqual({
      model: "fake-model",
      max_tokens: 10,
      stream: true,
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "noop", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", is_error: false }] },
      ],
    });
  });

  it("marks the tools, the system prompt and the history's end for caching, and reports the cache's usage", async () => {
    const cache = { key: "session-1", ttl: "5m" } as const;
    // Long enough (about 1 500 tokens) to pass the smallest cacheable prefix.
    const request = { ...historyRequest, system: "Be helpful. ".repeat(500), cache };
    const first = await client().complete(request);
    const body = fake.requests[0]?.body as {
      tools: Array<Record<string, unknown>>;
      system: Array<Record<string, unknown>>;
      messages: Array<{ content: Array<Record<string, unknown>> }>;
    };
    const ephemeral = { type: "ephemeral" };
    expect(body.tools.at(-1)?.cache_control).toEqual(ephemeral);
    expect(body.system).toEqual([{ type: "text", text: request.system, cache_control: ephemeral }]);
    const blocks = body.messages.flatMap((turn) => turn.content);
    expect(blocks.filter((block) => "cache_control" in block)).toEqual([blocks.at(-1)]);
    expect(blocks.at(-1)?.cache_control).toEqual(ephemeral);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1_000);

    const second = await client().complete({
      ...request,
      messages: [
        ...request.messages,
        { role: "assistant", content: [{ type: "text", text: "Sunny." }] },
        { role: "user", content: [{ type: "text", text: "Thanks." }] },
      ],
    });
    // The first request's whole prompt comes from the cache; only the two new turns are written.
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_creation_input_tokens).toBeLessThan(50);
  });

  it("asks for the one-hour cache when the request's ttl says so", async () => {
    await client().complete({ ...historyRequest, cache: { key: "s", ttl: "1h" } });
    const body = fake.requests[0]?.body as { system: Array<Record<string, unknown>> };
    expect(body.system[0]?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });
});
