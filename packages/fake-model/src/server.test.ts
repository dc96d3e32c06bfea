import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SUMMARY_REQUEST_MARKER } from "./request-view";
import { type FakeModelServer, startFakeModelServer } from "./server";

let fake: FakeModelServer;
let now = 0;

beforeEach(async () => {
  now = 1_000;
  fake = await startFakeModelServer({ clock: () => now });
});
afterEach(async () => {
  await fake.close();
});

const anthropicBody = (extra: Record<string, unknown> = {}) => ({
  model: "fake-model",
  max_tokens: 100,
  messages: [{ role: "user", content: "hello" }],
  ...extra,
});
const openaiBody = (extra: Record<string, unknown> = {}) => ({
  model: "fake-model",
  messages: [{ role: "user", content: "hello" }],
  ...extra,
});

function post(path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${fake.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(signal && { signal }),
  });
}

/** Splits an SSE body into its frames: `event:` name (if any) and parsed `data:`. */
function sseFrames(text: string): Array<{ event: string | undefined; data: string }> {
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const lines = frame.split("\n");
      const event = lines.find((line) => line.startsWith("event: "))?.slice(7);
      const data = lines.find((line) => line.startsWith("data: "))?.slice(6) ?? "";
      return { event, data };
    });
}

describe("Anthropic Messages endpoint", () => {
  it("streams text and a tool call as the exact Messages event sequence", async () => {
    fake.enqueue({
      text: "Let me check.",
      toolCalls: [{ name: "get_weather", input: { city: "Paris", days: 3 }, id: "toolu_1" }],
      usage: { input_tokens: 12, output_tokens: 34 },
    });
    const res = await post("/v1/messages", anthropicBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = sseFrames(await res.text());
    const events = frames.map((frame) => JSON.parse(frame.data));
    for (const [i, frame] of frames.entries()) expect(frame.event).toBe(events[i].type);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[0].message).toMatchObject({ role: "assistant", model: "fake-model", content: [] });
    expect(events[0].message.usage.input_tokens).toBe(12);
    const text = events
      .filter((event) => event.delta?.type === "text_delta")
      .map((event) => event.delta.text)
      .join("");
    expect(text).toBe("Let me check.");
    expect(events[7]).toEqual({
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} },
    });
    const json = events
      .filter((event) => event.delta?.type === "input_json_delta")
      .map((event) => event.delta.partial_json)
      .join("");
    expect(JSON.parse(json)).toEqual({ city: "Paris", days: 3 });
    expect(events[12]).toMatchObject({
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 34 },
    });
  });

  it("answers without stream as one Message", async () => {
    fake.enqueue({
      text: "Hi",
      toolCalls: [{ name: "t", input: { a: 1 } }],
      usage: { input_tokens: 1, output_tokens: 2 },
    });
    const res = await post("/v1/messages", anthropicBody());
    expect(await res.json()).toEqual({
      id: "msg_fake_0",
      type: "message",
      role: "assistant",
      model: "fake-model",
      content: [
        { type: "text", text: "Hi" },
        { type: "tool_use", id: "toolu_fake_0_1", name: "t", input: { a: 1 } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 1,
        output_tokens: 2,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      },
    });
  });

  it("sends scripted errors in Anthropic's error shape with retry-after", async () => {
    fake.enqueue({
      error: { status: 529, type: "overloaded_error", message: "Overloaded", retryAfterSeconds: 7 },
    });
    const res = await post("/v1/messages", anthropicBody({ stream: true }));
    expect(res.status).toBe(529);
    expect(res.headers.get("retry-after")).toBe("7");
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
  });

  it("breaks a stream off with an error event after the scripted text", async () => {
    fake.enqueue({
      error: { status: 529, type: "overloaded_error", message: "Overloaded" },
      afterText: "Par tial",
    });
    const res = await post("/v1/messages", anthropicBody({ stream: true }));
    expect(res.status).toBe(200);
    const frames = sseFrames(await res.text());
    expect(frames.map((frame) => frame.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "error",
    ]);
    expect(JSON.parse(frames.at(-1)?.data ?? "")).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
  });

  it("rejects a body that is not a Messages request", async () => {
    const res = await post("/v1/messages", { model: "m", messages: [] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: "invalid_request_error" } });
    const broken = await post("/v1/messages", "{not json");
    expect(broken.status).toBe(400);
  });
});

describe("OpenAI Chat Completions endpoint", () => {
  it("streams chunks with tool call deltas, finish_reason, a usage chunk and [DONE]", async () => {
    fake.enqueue({
      text: "One two",
      toolCalls: [{ name: "lookup", input: { q: "wakeloop" } }],
      usage: { input_tokens: 5, output_tokens: 6 },
    });
    const res = await post(
      "/v1/chat/completions",
      openaiBody({ stream: true, stream_options: { include_usage: true } }),
    );
    expect(res.status).toBe(200);
    const frames = sseFrames(await res.text()).map((frame) => frame.data);
    expect(frames.at(-1)).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((data) => JSON.parse(data));
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ object: "chat.completion.chunk", model: "fake-model" });
    const choices = chunks.slice(0, -1).map((chunk) => chunk.choices[0]);
    expect(choices[0].delta).toMatchObject({ role: "assistant" });
    expect(choices.map((choice) => choice.delta.content ?? "").join("")).toBe("One two");
    const toolDeltas = choices.flatMap((choice) => choice.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({
      index: 0,
      id: "call_fake_0_1",
      type: "function",
      function: { name: "lookup", arguments: "" },
    });
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(JSON.parse(toolDeltas.map((delta) => delta.function.arguments).join(""))).toEqual({
      q: "wakeloop",
    });
    expect(choices.at(-1).finish_reason).toBe("tool_calls");
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
    });
  });

  it("leaves the usage chunk out unless include_usage is asked for", async () => {
    const res = await post("/v1/chat/completions", openaiBody({ stream: true }));
    const chunks = sseFrames(await res.text())
      .map((frame) => frame.data)
      .filter((data) => data !== "[DONE]")
      .map((data) => JSON.parse(data));
    expect(chunks.every((chunk) => chunk.choices.length === 1 && !("usage" in chunk))).toBe(true);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
  });

  it("answers without stream as one chat.completion", async () => {
    fake.enqueue({ text: "cut", stopReason: "max_tokens", usage: { input_tokens: 3, output_tokens: 4 } });
    const body = await (await post("/v1/chat/completions", openaiBody())).json();
    expect(body).toMatchObject({
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "cut" }, finish_reason: "length" }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
  });

  it("breaks a stream off with an error chunk after the scripted text", async () => {
    fake.enqueue({ error: { status: 500, type: "server_error", message: "boom" }, afterText: "Half" });
    const res = await post("/v1/chat/completions", openaiBody({ stream: true }));
    const data = sseFrames(await res.text()).map((frame) => JSON.parse(frame.data));
    expect(data.at(-2)).toMatchObject({ choices: [{ delta: { content: "Half" } }] });
    expect(data.at(-1)).toEqual({
      error: { type: "server_error", message: "boom", param: null, code: "server_error" },
    });
  });

  it("sends scripted errors in OpenAI's error shape", async () => {
    fake.enqueue({ error: { status: 429, type: "rate_limit_error", message: "slow down" } });
    const res = await post("/v1/chat/completions", openaiBody());
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({
      error: { message: "slow down", type: "rate_limit_error", param: null, code: "rate_limit_error" },
    });
  });
});

describe("models endpoint", () => {
  it("lists models in the dialect of the caller", async () => {
    const anthropic = await (
      await fetch(`${fake.url}/v1/models`, { headers: { "anthropic-version": "2023-06-01" } })
    ).json();
    expect(anthropic).toMatchObject({ data: [{ type: "model", id: "fake-model" }], has_more: false });
    const openai = await (await fetch(`${fake.url}/v1/models`)).json();
    expect(openai).toMatchObject({ object: "list", data: [{ id: "fake-model", object: "model" }] });
  });
});

describe("scripting", () => {
  it("answers the default 'ok' when the queue is empty and estimates usage from characters", async () => {
    const body = await (await post("/v1/messages", anthropicBody())).json();
    const promptChars = JSON.stringify(["", anthropicBody().messages, []]).length;
    expect(body).toMatchObject({
      content: [{ type: "text", text: "ok" }],
      usage: { input_tokens: Math.ceil(promptChars / 4), output_tokens: 1 },
    });
  });

  it("takes the first queued turn whose match accepts the request", async () => {
    fake.setScript({
      turns: [
        { text: "for bob", match: (request) => request.lastUserText === "bob" },
        { text: "for anyone" },
      ],
      defaultTurn: (request) => ({ text: `default for ${request.lastUserText}` }),
    });
    const ask = async (text: string) => {
      const res = await post(
        "/v1/chat/completions",
        openaiBody({ messages: [{ role: "user", content: text }] }),
      );
      return res.json();
    };
    const answered = (content: string) => ({ choices: [{ message: { content } }] });
    expect(await ask("alice")).toMatchObject(answered("for anyone"));
    expect(await ask("bob")).toMatchObject(answered("for bob"));
    expect(await ask("carol")).toMatchObject(answered("default for carol"));
  });

  it("reports an invalid scripted turn to the caller instead of hanging", async () => {
    fake.enqueue({ toolCalls: [] });
    const res = await post("/v1/messages", anthropicBody());
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: { message: expect.stringContaining("invalid") } });
  });
});

describe("recording", () => {
  it("records each request with its body, headers and arrival time from the clock", async () => {
    const waiting = fake.waitForRequest(2, 2_000);
    await post("/v1/messages", anthropicBody(), { "x-trace": "a" });
    now = 2_500;
    await post("/v1/chat/completions", openaiBody());
    const second = await waiting;
    expect(second).toBe(fake.requests[1]);
    expect(fake.requests[0]).toMatchObject({
      index: 0,
      method: "POST",
      path: "/v1/messages",
      protocol: "anthropic",
      body: anthropicBody(),
      receivedAt: 1_000,
      aborted: false,
    });
    expect(fake.requests[0]?.headers["x-trace"]).toBe("a");
    expect(fake.requests[0]?.view).toMatchObject({ lastUserText: "hello", stream: false });
    expect(second).toMatchObject({ protocol: "openai", receivedAt: 2_500, finishedAt: 2_500 });
  });

  it("stamps each streamed piece of the answer as it is sent, and none of an answer sent whole", async () => {
    fake = await restartWithRealClock(fake);
    fake.enqueue({ text: "one two three", chunkDelayMs: 5 }, { text: "whole" });
    await (await post("/v1/chat/completions", openaiBody({ stream: true }))).text();
    await (await post("/v1/messages", anthropicBody())).json();
    await expect.poll(() => fake.requests[0]?.finishedAt).toBeDefined();
    const [streamed, whole] = fake.requests;
    expect(streamed?.outputAt).toHaveLength(3);
    const stamps = [streamed?.receivedAt ?? 0, ...(streamed?.outputAt ?? []), streamed?.finishedAt ?? 0];
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(whole?.outputAt).toEqual([]);
  });

  it("rejects waitForRequest when the request does not come in time", async () => {
    await expect(fake.waitForRequest(1, 50)).rejects.toThrow("request #1 did not arrive");
  });

  it("stops streaming and marks the request aborted when the client goes away", async () => {
    fake.enqueue({ text: "a b c d e f", chunkDelayMs: 1_000 });
    const controller = new AbortController();
    const res = await post("/v1/messages", anthropicBody({ stream: true }), {}, controller.signal);
    const reader = res.body?.getReader();
    await reader?.read();
    controller.abort();
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 2_000 }).toBe(true);
    expect(fake.requests[0]?.finishedAt).toBeUndefined();
  });

  it("delays the response by delayMs", async () => {
    fake = await restartWithRealClock(fake);
    fake.enqueue({ text: "late", delayMs: 150 });
    const started = performance.now();
    await (await post("/v1/messages", anthropicBody())).json();
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("holds hundreds of delayed responses at once, each waiting its own delay (a slow model under load)", async () => {
    fake = await restartWithRealClock(fake);
    fake.setScript({ defaultTurn: { text: "late", delayMs: 500 } });
    const started = performance.now();
    const bodies = await Promise.all(
      Array.from({ length: 300 }, async () => (await post("/v1/chat/completions", openaiBody())).json()),
    );
    const elapsed = performance.now() - started;
    expect(bodies).toHaveLength(300);
    expect(elapsed).toBeGreaterThanOrEqual(490);
    // One after another they would take 150 s; waiting on timers, they overlap.
    expect(elapsed).toBeLessThan(10_000);
    const waits = fake.requests.map((request) => (request.finishedAt ?? 0) - request.receivedAt);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(490);
  });
});

async function restartWithRealClock(server: FakeModelServer): Promise<FakeModelServer> {
  await server.close();
  return startFakeModelServer();
}

describe("OpenAI Embeddings endpoint", () => {
  const cosine = (a: number[], b: number[]) =>
    a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);

  it("answers a batch deterministically: shared word stems are close, unrelated texts are not", async () => {
    const input = [
      "The staging database password rotates every Monday",
      "how often is the staging password rotated",
      "lunch menu for the offsite",
    ];
    const first = await post("/v1/embeddings", { model: "fake-embed", input });
    expect(first.status).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: the wire body as the SDK would read it
    const body: any = await first.json();
    expect(body).toMatchObject({
      object: "list",
      model: "fake-embed",
      usage: { prompt_tokens: expect.any(Number) },
    });
    const vectors = body.data.map((item: { index: number; embedding: number[] }) => item.embedding);
    expect(body.data.map((item: { index: number }) => item.index)).toEqual([0, 1, 2]);
    expect(vectors[0]).toHaveLength(256);
    expect(cosine(vectors[0], vectors[0])).toBeCloseTo(1, 5);
    expect(cosine(vectors[0], vectors[1])).toBeGreaterThan(0.4);
    expect(Math.abs(cosine(vectors[0], vectors[2]))).toBeLessThan(0.2);
    // biome-ignore lint/suspicious/noExplicitAny: the wire body as the SDK would read it
    const again: any = await (await post("/v1/embeddings", { model: "fake-embed", input })).json();
    expect(again.data).toEqual(body.data);
    expect(fake.requests.at(-1)?.path).toBe("/v1/embeddings");
  });

  it("speaks base64 and dimensions as the official SDK asks", async () => {
    const res = await post("/v1/embeddings", {
      model: "m",
      input: "staging password",
      encoding_format: "base64",
      dimensions: 16,
    });
    // biome-ignore lint/suspicious/noExplicitAny: the wire body as the SDK would read it
    const [item] = ((await res.json()) as any).data;
    const floats = new Float32Array(Uint8Array.from(Buffer.from(item.embedding, "base64")).buffer);
    expect(floats).toHaveLength(16);
    expect(Math.hypot(...floats)).toBeCloseTo(1, 5);
  });

  it("rejects bad input with 400 and fails on request for retry tests", async () => {
    const bad = await post("/v1/embeddings", { model: "m", input: [] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: "invalid_request_error" } });
    fake.failEmbeddings(2);
    expect((await post("/v1/embeddings", { model: "m", input: "x" })).status).toBe(503);
    expect((await post("/v1/embeddings", { model: "m", input: "x" })).status).toBe(503);
    expect((await post("/v1/embeddings", { model: "m", input: "x" })).status).toBe(200);
  });
});

describe("summary requests (context compaction)", () => {
  const transcript = "Summarise this conversation:\n\nuser: first\nagent: ok\nuser: deploy the site";

  it("answers them in both wire formats, streaming, without taking the script's next turn", async () => {
    fake.enqueue({ text: "scripted answer" });
    const anthropic = await post(
      "/v1/messages",
      anthropicBody({
        stream: true,
        system: `${SUMMARY_REQUEST_MARKER}\nYou write the summary.`,
        messages: [{ role: "user", content: transcript }],
      }),
    );
    const deltas = sseFrames(await anthropic.text())
      .map((frame) => JSON.parse(frame.data))
      .filter((event) => event.type === "content_block_delta")
      .map((event) => event.delta.text)
      .join("");
    expect(deltas).toBe("Fake summary of 5 transcript lines. Last user line: deploy the site");

    const openai = await post(
      "/v1/chat/completions",
      openaiBody({
        stream: true,
        messages: [
          { role: "system", content: `${SUMMARY_REQUEST_MARKER}\nYou write the summary.` },
          { role: "user", content: transcript },
        ],
      }),
    );
    const text = sseFrames(await openai.text())
      .filter((frame) => frame.data !== "[DONE]")
      .map((frame) => JSON.parse(frame.data).choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe("Fake summary of 5 transcript lines. Last user line: deploy the site");

    // The scripted turn is still there for the session's own request.
    const own = await post("/v1/messages", anthropicBody());
    expect(((await own.json()) as { content: Array<{ text: string }> }).content[0]?.text).toBe(
      "scripted answer",
    );
  });

  it("lets a scripted turn that matches a summary request answer it (a hang, an error)", async () => {
    fake.enqueue({ text: "own" });
    fake.enqueue({ match: (request) => request.summaryRequest, text: "scripted summary" });
    const res = await post(
      "/v1/messages",
      anthropicBody({ system: SUMMARY_REQUEST_MARKER, messages: [{ role: "user", content: transcript }] }),
    );
    expect(((await res.json()) as { content: Array<{ text: string }> }).content[0]?.text).toBe(
      "scripted summary",
    );
  });
});
