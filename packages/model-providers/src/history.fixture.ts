import type { ModelRequest } from "./model-client";

/**
 * One conversation touching every part of the neutral history: user text and image, assistant text
 * with two tool calls, a successful and a failed result (one with an image), then new user input.
 */
export const historyRequest: ModelRequest = {
  model: "fake-model",
  system: "Be helpful.",
  maxOutputTokens: 512,
  tools: [
    {
      name: "get_weather",
      description: "Weather for a city",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
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
        { type: "tool_call", id: "call_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_call", id: "call_2", name: "get_weather", input: { city: "Atlantis" } },
      ],
    },
    {
      role: "tool",
      results: [
        {
          toolCallId: "call_1",
          content: [
            { type: "text", text: "18C" },
            { type: "image", source: { type: "url", url: "https://example.com/map.png" } },
          ],
          isError: false,
        },
        { toolCallId: "call_2", content: [{ type: "text", text: "unknown city" }], isError: true },
      ],
    },
    { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
  ],
};
