import Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock } from "@wakeloop/contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toAnthropicBody, toAnthropicParams } from "./anthropic-request";
import { historyRequest } from "./history.fixture";
import type { ModelMessage, ModelRequest, ModelToolSpec } from "./model-client";

class Sent extends Error {
  constructor(readonly body: string) {
    super("request captured");
  }
}

/** The body `messages.create` sends for the request's params, captured before it leaves the process. */
async function sdkBody(request: ModelRequest): Promise<string> {
  const client = new Anthropic({
    apiKey: "test-key",
    maxRetries: 0,
    fetch: async (_url, init) => {
      throw new Sent(String(init?.body));
    },
  });
  try {
    await client.messages.create(toAnthropicParams(request));
  } catch (error) {
    const cause = error instanceof Sent ? error : (error as { cause?: unknown }).cause;
    if (cause instanceof Sent) return cause.body;
    throw error;
  }
  throw new Error("the request was not sent");
}

// Text includes the empty string (dropped on the wire), quotes, escapes and characters beyond ASCII.
const text = fc.oneof(fc.constant(""), fc.string(), fc.string({ unit: "binary" }));
const content: fc.Arbitrary<ContentBlock[]> = fc.array(
  fc.oneof(
    text.map((value) => ({ type: "text" as const, text: value })),
    fc.constantFrom<ContentBlock>(
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/map.png" } },
    ),
  ),
  { maxLength: 3 },
);
const input = fc.dictionary(fc.string(), fc.jsonValue()) as fc.Arbitrary<Record<string, unknown>>;
const message: fc.Arbitrary<ModelMessage> = fc.oneof(
  content.map((blocks) => ({ role: "user" as const, content: blocks })),
  fc
    .array(
      fc.oneof(
        text.map((value) => ({ type: "text" as const, text: value })),
        fc.record({ type: fc.constant("tool_call" as const), id: fc.string(), name: fc.string(), input }),
      ),
      { maxLength: 3 },
    )
    .map((parts) => ({ role: "assistant" as const, content: parts })),
  fc
    .array(fc.record({ toolCallId: fc.string(), content, isError: fc.boolean() }), { maxLength: 3 })
    .map((results) => ({ role: "tool" as const, results })),
);
const tool: fc.Arbitrary<ModelToolSpec> = fc.record({
  name: fc.string(),
  description: fc.string(),
  inputSchema: fc.record({
    properties: fc.dictionary(fc.string(), fc.record({ type: fc.constant("string") })),
  }),
});
const request: fc.Arbitrary<ModelRequest> = fc
  .record({
    model: fc.string(),
    system: text,
    messages: fc.array(message, { maxLength: 12 }),
    tools: fc.array(tool, { maxLength: 3 }),
    maxOutputTokens: fc.integer({ min: 1, max: 100_000 }),
    cache: fc.option(fc.record({ key: fc.string(), ttl: fc.constantFrom("5m" as const, "1h" as const) })),
  })
  .map(({ cache, ...rest }) => (cache === null ? rest : { ...rest, cache }));

describe("toAnthropicBody", () => {
  it("encodes the document messages.create sends, for every shape of history", async () => {
    await fc.assert(
      fc.asyncProperty(request, async (each) => {
        const body = toAnthropicBody(each);
        expect(JSON.parse(body.toString("utf8"))).toStrictEqual(JSON.parse(await sdkBody(each)));
        // Built again from the cached pieces, the body is the same bytes.
        expect(toAnthropicBody(each).equals(body)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("merges a tool result and the user input after it into one user turn, as the API requires", async () => {
    const body = JSON.parse(toAnthropicBody(historyRequest).toString("utf8"));
    expect(body).toStrictEqual(JSON.parse(await sdkBody(historyRequest)));
    expect(body.messages.map((turn: { role: string }) => turn.role)).toEqual(["user", "assistant", "user"]);
    expect(body.messages[2].content.map((block: { type: string }) => block.type)).toEqual([
      "tool_result",
      "tool_result",
      "text",
    ]);
  });

  it("sends no turn for a history whose messages have no blocks", async () => {
    const empty: ModelRequest = {
      ...historyRequest,
      tools: [],
      messages: [
        { role: "user", content: [{ type: "text", text: "" }] },
        { role: "assistant", content: [] },
      ],
    };
    const body = JSON.parse(toAnthropicBody(empty).toString("utf8"));
    expect(body).toStrictEqual(JSON.parse(await sdkBody(empty)));
    expect(body.messages).toEqual([]);
  });
});
