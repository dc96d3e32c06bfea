import { describe, expect, it } from "vitest";
import { demoScript, echoScript } from "./builtin-scripts";
import { type FakeRequestView, viewAnthropicRequest } from "./request-view";

function view(messages: unknown[]): FakeRequestView {
  const parsed = viewAnthropicRequest({ model: "m", max_tokens: 10, messages });
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

describe("echo script", () => {
  it("repeats the latest user text", () => {
    expect(answer(echoScript(), view([{ role: "user", content: "hello there" }]))).toEqual({
      text: "hello there",
    });
  });
});
