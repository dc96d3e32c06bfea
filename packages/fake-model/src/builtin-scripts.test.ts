import { describe, expect, it } from "vitest";
import { demoScript, echoScript, plainTurn } from "./builtin-scripts";
import { type FakeRequestView, viewAnthropicRequest } from "./request-view";

function view(messages: unknown[], toolNames = ["set_state", "deploy"]): FakeRequestView {
  const tools = toolNames.map((name) => ({ name, input_schema: { type: "object" } }));
  const parsed = viewAnthropicRequest({ model: "m", max_tokens: 10, messages, tools });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.view;
}

function answer(script: ReturnType<typeof demoScript>, request: FakeRequestView) {
  const turn = script.defaultTurn;
  return typeof turn === "function" ? turn(request) : turn;
}

describe("demo script", () => {
  const script = demoScript({ approvalTool: "deploy", chunkDelayMs: 0 });
  const user = { role: "user", content: "ship it" };
  const setState = {
    role: "assistant",
    content: [{ type: "tool_use", id: "a", name: "set_state", input: {} }],
  };
  const deploy = { role: "assistant", content: [{ type: "tool_use", id: "b", name: "deploy", input: {} }] };
  const result = (id: string, content: string, isError = false) => ({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }],
  });

  it("first streams text and records the request with set_state", () => {
    expect(answer(script, view([user]))).toMatchObject({
      text: expect.any(String),
      toolCalls: [{ name: "set_state", input: { key: "last_request", value: "ship it" } }],
    });
  });

  it("then calls the approval tool named in its options", () => {
    expect(answer(script, view([user, setState, result("a", "{}")]))).toMatchObject({
      toolCalls: [{ name: "deploy", input: { target: "staging" } }],
    });
  });

  it("then ends with text that reflects whether the step ran", () => {
    const done = answer(script, view([user, setState, result("a", "{}"), deploy, result("b", "deployed")]));
    expect(done).toEqual({ text: "The deploy step is done: deployed", chunkDelayMs: 0 });
    const denied = answer(
      script,
      view([user, setState, result("a", "{}"), deploy, result("b", "denied", true)]),
    );
    expect(denied).toMatchObject({ text: "The deploy step was not carried out: denied" });
  });
});

describe("any other agent (no approval tool offered)", () => {
  const script = demoScript({ approvalTool: "deploy", chunkDelayMs: 0 });
  const ask = (text: string) => view([{ role: "user", content: text }], ["read", "set_state"]);

  it("answers plainly and the same way every time, calling no tool", () => {
    const first = answer(script, ask("hello"));
    expect(first).toEqual({
      text: expect.stringMatching(/^You said: "hello"\. This is Wakeloop's local fake model/),
      chunkDelayMs: 0,
    });
    expect(answer(script, ask("hello"))).toEqual(first);
  });

  it("calls a tool only when asked with /tool NAME {input}, then reports its result", () => {
    expect(answer(script, ask('/tool set_state {"key":"color","value":"blue"}'))).toMatchObject({
      toolCalls: [{ name: "set_state", input: { key: "color", value: "blue" } }],
    });
    expect(answer(script, ask("/tool read"))).toMatchObject({ toolCalls: [{ name: "read", input: {} }] });
    const called = view(
      [
        { role: "user", content: "/tool read" },
        { role: "assistant", content: [{ type: "tool_use", id: "r", name: "read", input: {} }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "r", content: "no path", is_error: true }],
        },
      ],
      ["read"],
    );
    expect(plainTurn(called)).toEqual({ text: "read failed: no path" });
  });

  it("refuses a tool the agent is not offered, and input that is not a JSON object", () => {
    expect(answer(script, ask("/tool deploy {}"))).toMatchObject({
      text: "This agent is not offered a tool named deploy. It is offered: read, set_state.",
    });
    expect(answer(script, ask("/tool read [1]"))).not.toHaveProperty("toolCalls");
  });
});

describe("echo script", () => {
  it("repeats the latest user text", () => {
    expect(answer(echoScript(), view([{ role: "user", content: "hello there" }]))).toEqual({
      text: "hello there",
    });
  });
});
