import { describe, expect, it } from "vitest";
import { ModelError } from "../errors";
import type { ModelRequest, ModelStreamEvent } from "../model-client";
import { scriptedModel } from "./scripted-model";

const request: ModelRequest = {
  model: "m",
  system: "",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  maxOutputTokens: 10,
};

describe("scriptedModel", () => {
  it("plays queued turns in order, records requests, then answers ok", async () => {
    const model = scriptedModel([
      { text: "first", toolCalls: [{ name: "t", input: { a: 1 } }], usage: { input_tokens: 3 } },
    ]);
    const events: ModelStreamEvent[] = [];
    for await (const event of model.stream(request)) events.push(event);
    expect(events).toEqual([
      { type: "text_delta", index: 0, text: "first" },
      { type: "tool_call", id: "call_scripted_1", name: "t", input: { a: 1 } },
      {
        type: "message_end",
        stopReason: "tool_use",
        usage: {
          input_tokens: 3,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    ]);
    expect(await model.complete(request)).toMatchObject({
      text: "ok",
      stopReason: "end_turn",
      toolCalls: [],
    });
    expect(model.requests).toEqual([request, request]);
  });

  it("throws scripted errors and honours an aborted signal", async () => {
    const model = scriptedModel([{ error: new ModelError("model_overloaded", "busy") }]);
    await expect(model.complete(request)).rejects.toMatchObject({ code: "model_overloaded" });
    model.enqueue({ text: "never" });
    await expect(model.complete(request, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: "model_aborted",
    });
  });
});
