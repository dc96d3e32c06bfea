import { describe, expect, it } from "vitest";
import { viewAnthropicRequest, viewOpenAIRequest } from "./request-view";

describe("viewAnthropicRequest", () => {
  it("reads the last user text and the results that answer the latest assistant turn", () => {
    const parsed = viewAnthropicRequest({
      model: "m",
      max_tokens: 10,
      stream: true,
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "old", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "done" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "two calls" },
            { type: "tool_use", id: "t2", name: "set_state", input: {} },
            { type: "tool_use", id: "t3", name: "deploy", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t2", content: [{ type: "text", text: "saved" }] },
            { type: "tool_result", tool_use_id: "t3", content: "denied", is_error: true },
            { type: "text", text: "and then?" },
          ],
        },
      ],
    });
    expect(parsed.ok && parsed.view).toMatchObject({
      protocol: "anthropic",
      stream: true,
      lastUserText: "and then?",
      toolResults: [
        { toolCallId: "t2", name: "set_state", text: "saved", isError: false },
        { toolCallId: "t3", name: "deploy", text: "denied", isError: true },
      ],
    });
  });

  it("refuses a request without max_tokens", () => {
    const parsed = viewAnthropicRequest({ model: "m", messages: [{ role: "user", content: "x" }] });
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain("max_tokens");
  });
});

describe("viewOpenAIRequest", () => {
  it("reads trailing tool messages, names them from the assistant's tool_calls, spots errors", () => {
    const parsed = viewOpenAIRequest({
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "hi" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "set_state", arguments: "{}" } },
            { id: "c2", type: "function", function: { name: "deploy", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "ok" },
        { role: "tool", tool_call_id: "c2", content: "Error: denied" },
      ],
    });
    expect(parsed.ok && parsed.view).toMatchObject({
      protocol: "openai",
      includeUsage: true,
      lastUserText: "hi",
      toolResults: [
        { toolCallId: "c1", name: "set_state", text: "ok", isError: false },
        { toolCallId: "c2", name: "deploy", text: "Error: denied", isError: true },
      ],
    });
  });

  it("has no tool results when the conversation ends with user input", () => {
    const parsed = viewOpenAIRequest({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(parsed.ok && parsed.view.toolResults).toEqual([]);
  });
});
