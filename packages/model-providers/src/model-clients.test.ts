import { getEventListeners } from "node:events";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicClient } from "./anthropic-client";
import { ModelError } from "./errors";
import type { ModelClient, ModelDelta, ModelRequest, ModelStreamEvent } from "./model-client";
import { createOpenAIClient } from "./openai-client";

// The behaviour every adapter owes the harness, checked through each SDK against the fake server.

let fake: FakeModelServer;
beforeEach(async () => {
  fake = await startFakeModelServer();
});
afterEach(async () => {
  await fake.close();
});

const adapters: Array<[string, (serverUrl: string) => ModelClient]> = [
  ["anthropic", (serverUrl) => createAnthropicClient({ apiKey: "test-key", baseURL: serverUrl })],
  ["openai", (serverUrl) => createOpenAIClient({ apiKey: "test-key", baseURL: `${serverUrl}/v1` })],
];

const request: ModelRequest = {
  model: "fake-model",
  system: "You are terse.",
  messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
  tools: [
    {
      name: "get_weather",
      description: "Weather for a city",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  ],
  maxOutputTokens: 256,
};

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const seen: ModelStreamEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

async function failure(run: () => Promise<unknown>): Promise<ModelError> {
  const error = await run().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe.each(adapters)("%s adapter", (_name, clientFor) => {
  const makeClient = () => clientFor(fake.url);

  it("streams a plain text turn as deltas and ends it with usage", async () => {
    fake.enqueue({ text: "Hello there, friend.", usage: { input_tokens: 21, output_tokens: 5 } });
    const events = await collect(makeClient().stream(request));
    const deltas = events.filter((event) => event.type === "text_delta");
    expect(deltas.length).toBe(3);
    expect(deltas.map((event) => event.text).join("")).toBe("Hello there, friend.");
    expect(events.at(-1)).toEqual({
      type: "message_end",
      stopReason: "end_turn",
      usage: {
        input_tokens: 21,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    expect(events.filter((event) => event.type === "message_end")).toHaveLength(1);
  });

  it("reassembles tool call arguments split across chunks, in the model's order", async () => {
    fake.enqueue({
      text: "Checking both.",
      toolCalls: [
        { name: "get_weather", input: { city: "Paris", units: { temp: "C" } } },
        { name: "get_weather", input: { city: "Lima" }, id: "given_id" },
      ],
    });
    const deltas: ModelDelta[] = [];
    const response = await makeClient().complete(request, { onDelta: (delta) => deltas.push(delta) });
    expect(response.text).toBe("Checking both.");
    // The arguments also arrive piece by piece (the fake sends each in three), ahead of the whole call.
    const text = deltas.filter((delta) => delta.type === "text_delta");
    expect(text.map((delta) => delta.text).join("")).toBe("Checking both.");
    const pieces = deltas.filter((delta) => delta.type === "tool_input_delta");
    expect(pieces).toHaveLength(6);
    for (const call of response.toolCalls) {
      const own = pieces.filter((delta) => delta.id === call.id);
      expect(own.every((delta) => delta.name === "get_weather")).toBe(true);
      expect(JSON.parse(own.map((delta) => delta.partialJson).join(""))).toEqual(call.input);
      expect(new Set(own.map((delta) => delta.index)).size).toBe(1);
    }
    expect(response.stopReason).toBe("tool_use");
    expect(response.toolCalls).toEqual([
      { id: expect.any(String), name: "get_weather", input: { city: "Paris", units: { temp: "C" } } },
      { id: "given_id", name: "get_weather", input: { city: "Lima" } },
    ]);
    expect(response.toolCalls[0]?.id).not.toBe("");
  });

  it("reports malformed tool arguments on the call instead of failing the turn", async () => {
    fake.enqueue({
      toolCalls: [
        { name: "get_weather", rawInput: '{"city": "Par' },
        { name: "get_weather", rawInput: "[1, 2]" },
        { name: "get_weather", input: { city: "Oslo" } },
      ],
    });
    const { toolCalls } = await makeClient().complete(request);
    expect(toolCalls[0]).toMatchObject({ input: {}, inputError: { raw: '{"city": "Par' } });
    expect(toolCalls[0]?.inputError?.message).toContain("not valid JSON");
    expect(toolCalls[1]?.inputError?.message).toBe("tool arguments must be a JSON object, got an array");
    expect(toolCalls[2]).toEqual({ id: expect.any(String), name: "get_weather", input: { city: "Oslo" } });
  });

  it("maps a length stop to max_tokens", async () => {
    fake.enqueue({ text: "truncat", stopReason: "max_tokens" });
    expect((await makeClient().complete(request)).stopReason).toBe("max_tokens");
  });

  it("reports the server's usage estimate when none is scripted", async () => {
    const { usage } = await makeClient().complete(request);
    expect(usage.input_tokens).toBeGreaterThan(10);
    expect(usage.output_tokens).toBe(1);
  });

  it.each([
    [529, "overloaded_error", "model_overloaded", true],
    [503, "api_error", "model_overloaded", true],
    [429, "rate_limit_error", "model_rate_limited", true],
    [500, "api_error", "model_request_failed", true],
    [400, "invalid_request_error", "model_invalid_request", false],
    [401, "authentication_error", "model_invalid_request", false],
  ])("maps HTTP %i %s to %s (retryable: %s)", async (status, type, code, retryable) => {
    fake.enqueue({ error: { status, type, message: `scripted ${status}` } });
    const error = await failure(() => makeClient().complete(request));
    expect(error).toMatchObject({ code, retryable });
    expect(error.details).toMatchObject({ status, providerType: type });
    // The provider's text stays out of the message (a session would show it); the status is in.
    expect(error.message).not.toContain(`scripted ${status}`);
    expect(error.message).toContain(`answered ${status}`);
    expect(fake.requests).toHaveLength(1);
  });

  it("fails with the provider's error when the stream breaks off after some text", async () => {
    fake.enqueue({
      error: { status: 529, type: "overloaded_error", message: "Overloaded" },
      afterText: "So far",
    });
    const seen: ModelStreamEvent[] = [];
    const error = await failure(async () => {
      for await (const event of makeClient().stream(request)) seen.push(event);
    });
    expect(seen).toEqual([
      { type: "text_delta", index: 0, text: "So " },
      { type: "text_delta", index: 0, text: "far" },
    ]);
    expect(error).toMatchObject({
      code: "model_overloaded",
      retryable: true,
      details: { providerType: "overloaded_error" },
    });
  });

  it("carries retry-after on a rate limit", async () => {
    fake.enqueue({ error: { status: 429, type: "rate_limit_error", message: "slow", retryAfterSeconds: 3 } });
    const error = await failure(() => makeClient().complete(request));
    expect(error.details.retryAfterMs).toBe(3_000);
  });

  it("maps a refused connection to a retryable failed request", async () => {
    const closed = await startFakeModelServer();
    await closed.close();
    const client = clientFor(closed.url);
    const error = await failure(() => client.complete(request));
    expect(error).toMatchObject({ code: "model_request_failed", retryable: true });
  });

  it("stops mid-stream when the signal aborts, and the server sees the request end", async () => {
    fake.enqueue({ text: "one two three four five", chunkDelayMs: 2_000 });
    const controller = new AbortController();
    const stream = makeClient().stream(request, { signal: controller.signal })[Symbol.asyncIterator]();
    expect(await stream.next()).toMatchObject({ value: { type: "text_delta", text: "one " } });
    const abortedAt = performance.now();
    controller.abort();
    const error = await failure(() => stream.next());
    expect(error).toMatchObject({ code: "model_aborted", retryable: false });
    expect(performance.now() - abortedAt).toBeLessThan(500);
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 2_000 }).toBe(true);
  });

  it("aborts while waiting for the response to start", async () => {
    fake.enqueue({ text: "late", delayMs: 2_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const startedAt = performance.now();
    const error = await failure(() => makeClient().complete(request, { signal: controller.signal }));
    expect(error.code).toBe("model_aborted");
    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });

  it("makes no request when the signal is already aborted", async () => {
    const error = await failure(() => makeClient().complete(request, { signal: AbortSignal.abort() }));
    expect(error.code).toBe("model_aborted");
    expect(fake.requests).toHaveLength(0);
  });

  it("ends the HTTP request when the consumer stops reading", async () => {
    fake.enqueue({ text: "a b c d e f", chunkDelayMs: 2_000 });
    for await (const event of makeClient().stream(request)) {
      expect(event.type).toBe("text_delta");
      break;
    }
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 2_000 }).toBe(true);
  });

  it("leaves no listener on the caller's signal once a request ends, whichever way it ends", async () => {
    // A wake hands the same signal to each of its requests.
    const controller = new AbortController();
    const client = makeClient();
    fake.enqueue({ text: "one" }, { error: { status: 400, type: "invalid_request_error", message: "no" } });
    await client.complete(request, { signal: controller.signal });
    await failure(() => client.complete(request, { signal: controller.signal }));
    fake.enqueue({ text: "a b c", chunkDelayMs: 2_000 });
    for await (const _ of client.stream(request, { signal: controller.signal })) break;
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
