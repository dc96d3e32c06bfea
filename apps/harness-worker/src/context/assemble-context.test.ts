import type { EventPayload, SessionEvent } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import {
  estimateTokens,
  eventsToMessages,
  fitToBudget,
  History,
  IMAGE_TOKENS,
  MISSING_RESULT,
} from "./assemble-context";

let seq = 0;
function event(payload: EventPayload & { id?: string }): SessionEvent {
  seq += 1;
  return {
    session_id: "s",
    processed_at: null,
    created_at: "2026-11-01T00:00:00.000Z",
    ...payload,
    id: payload.id ?? `e${seq}`,
    seq,
  } as SessionEvent;
}
const text = (t: string) => [{ type: "text" as const, text: t }];

describe("eventsToMessages", () => {
  it("shows the model an outcome a person defined as a user turn with its criteria", () => {
    const messages = eventsToMessages([
      event({
        type: "user.define_outcome",
        description: "Ship 1.2\nwith notes",
        criteria: ["notes list fixes"],
      }),
    ]);
    expect(messages).toEqual([
      {
        role: "user",
        content: text(
          "Outcome to work toward (defined by the user):\nShip 1.2\nwith notes\n\nSuccess criteria:\n- notes list fixes",
        ),
      },
    ]);
  });

  it("puts recalled memory right after the messages it was recalled for, and keeps earlier turns as they were", () => {
    const recall = (recalled?: string) =>
      event({
        type: "session.memory_recalled",
        message_ids: [],
        budget_tokens: 1_000,
        hits: [],
        dropped: 0,
        ...(recalled !== undefined && { text: recalled }),
      });
    const first = [
      event({ type: "user.message", content: text("vpn?") }),
      recall("## Recalled memory\nUse the VPN."),
    ];
    const later = [
      ...first,
      event({ type: "agent.message", content: text("Use the VPN.") }),
      event({ type: "user.message", content: text("and staging?") }),
      recall("## Recalled memory\nStaging is behind the VPN."),
      // An event from before recall kept its text adds nothing.
      recall(),
    ];
    const before = eventsToMessages(first);
    expect(before).toEqual([
      { role: "user", content: text("vpn?") },
      { role: "user", content: text("## Recalled memory\nUse the VPN.") },
    ]);
    const after = eventsToMessages(later);
    expect(after.slice(0, 2)).toEqual(before);
    expect(after.slice(2)).toEqual([
      { role: "assistant", content: text("Use the VPN.") },
      { role: "user", content: text("and staging?") },
      { role: "user", content: text("## Recalled memory\nStaging is behind the VPN.") },
    ]);
  });

  it("groups one response's text and calls into one assistant turn followed by its results", () => {
    const messages = eventsToMessages([
      event({ type: "user.message", content: text("hi") }),
      event({ type: "agent.message", content: text("looking") }),
      event({
        id: "c1",
        type: "agent.tool_use",
        name: "get_state",
        input: { key: "a" },
        evaluated_permission: "allow",
      }),
      event({ id: "c2", type: "agent.custom_tool_use", name: "lookup", input: {} }),
      event({
        type: "span.model_request_end",
        model_request_start_id: "x",
        model_usage: {
          input_tokens: 1,
          output_tokens: 1,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
        is_error: false,
      }),
      event({ type: "agent.tool_result", tool_use_id: "c1", content: text("1"), is_error: false }),
      event({ type: "user.custom_tool_result", custom_tool_use_id: "c2", content: text("found") }),
      event({ type: "agent.message", content: text("done") }),
    ]);
    expect(messages).toEqual([
      { role: "user", content: text("hi") },
      {
        role: "assistant",
        content: [
          { type: "text", text: "looking" },
          { type: "tool_call", id: "c1", name: "get_state", input: { key: "a" } },
          { type: "tool_call", id: "c2", name: "lookup", input: {} },
        ],
      },
      {
        role: "tool",
        results: [
          { toolCallId: "c1", content: text("1"), isError: false },
          { toolCallId: "c2", content: text("found"), isError: false },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ]);
  });

  it("moves a message that arrived while tools ran after their results", () => {
    const messages = eventsToMessages([
      event({ type: "user.message", content: text("first") }),
      event({ id: "c1", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
      event({ type: "user.message", content: text("second") }),
      event({ type: "agent.tool_result", tool_use_id: "c1", content: text("ok"), is_error: false }),
    ]);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(messages[3]).toEqual({ role: "user", content: text("second") });
  });

  it("answers a call that never got a result with an error, so the wire stays valid", () => {
    const messages = eventsToMessages([
      event({ type: "user.message", content: text("go") }),
      event({ id: "c1", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
    ]);
    expect(messages[2]).toEqual({
      role: "tool",
      results: [{ toolCallId: "c1", content: text(MISSING_RESULT), isError: true }],
    });
  });

  it("starts a new assistant turn when the next response makes calls after all earlier ones were answered", () => {
    const messages = eventsToMessages([
      event({ type: "user.message", content: text("go") }),
      event({ id: "c1", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
      event({ type: "agent.tool_result", tool_use_id: "c1", content: text("a"), is_error: false }),
      event({ id: "c2", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
      event({ type: "agent.tool_result", tool_use_id: "c2", content: text("b"), is_error: true }),
    ]);
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
    ]);
  });
});

describe("History", () => {
  it("built one event at a time, reads as the whole history at every point", () => {
    const events = [
      event({ type: "user.message", content: text("first") }),
      event({ type: "agent.message", content: text("looking") }),
      event({ id: "h1", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
      event({ type: "user.message", content: text("meanwhile") }),
      event({ id: "h2", type: "agent.custom_tool_use", name: "lookup", input: {} }),
      event({ type: "agent.tool_result", tool_use_id: "h1", content: text("a"), is_error: false }),
      event({
        type: "session.error",
        error: { type: "internal_error", message: "x", retry_status: { type: "terminal" } },
      }),
      event({ type: "user.custom_tool_result", custom_tool_use_id: "h2", content: text("b") }),
      event({ id: "h3", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
      event({ type: "agent.message", content: text("done") }),
      event({ type: "user.message", content: text("again") }),
    ];
    const history = new History();
    events.forEach((next, index) => {
      history.add(next);
      const { messages, tokens } = history.messages();
      expect(messages).toEqual(eventsToMessages(events.slice(0, index + 1)));
      expect(tokens).toEqual(messages.map((message) => Math.ceil(JSON.stringify(message).length / 4)));
    });
    expect(history.seen).toBe(events.length);
  });

  it("gives every request the same open-turn messages until an event changes them, and keeps them", () => {
    const history = new History();
    history.add(event({ type: "user.message", content: text("go") }));
    history.add(
      event({ id: "o1", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
    );
    history.add(event({ type: "agent.tool_result", tool_use_id: "o1", content: text("a"), is_error: false }));
    const first = history.messages().messages;
    history.add(event({ type: "span.model_request_start", model: "m" }));
    const second = history.messages().messages;
    expect(second[1]).toBe(first[1]);
    expect(second[2]).toBe(first[2]);
    history.add(
      event({ id: "o2", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
    );
    const third = history.messages().messages;
    expect(third[1]).toBe(first[1]);
    expect(third[2]).toBe(first[2]);
    expect(third[3]).not.toBe(first[1]);
    expect(third[3]).toEqual({
      role: "assistant",
      content: [{ type: "tool_call", id: "o2", name: "read", input: {} }],
    });
  });
});

describe("fitToBudget", () => {
  it("drops the oldest exchanges, cutting only at a user message", () => {
    const history = eventsToMessages([
      event({ type: "user.message", content: text("x".repeat(4_000)) }),
      event({ id: "c1", type: "agent.tool_use", name: "read", input: {}, evaluated_permission: "allow" }),
      event({
        type: "agent.tool_result",
        tool_use_id: "c1",
        content: text("y".repeat(4_000)),
        is_error: false,
      }),
      event({ type: "user.message", content: text("latest") }),
    ]);
    const kept = fitToBudget(history, 200);
    expect(kept).toEqual([{ role: "user", content: text("latest") }]);
    expect(fitToBudget(history, 1_000_000)).toEqual(history);
  });
});

describe("estimateTokens", () => {
  it("counts an image block by what a model bills for it, not by the length of its base64", () => {
    const shot = {
      type: "image",
      source: { type: "base64", media_type: "image/png", data: "A".repeat(400_000) },
    };
    const result = {
      role: "tool",
      results: [{ toolCallId: "c", content: [...text("{}"), shot], isError: false }],
    };
    const withoutImage = estimateTokens({
      ...result,
      results: [{ ...result.results[0], content: text("{}") }],
    });
    // The image's place in its array is left as `null`: a couple of characters, not 100 000 tokens.
    const extra = estimateTokens(result) - withoutImage - IMAGE_TOKENS;
    expect(extra).toBeGreaterThanOrEqual(0);
    expect(extra).toBeLessThanOrEqual(2);
    expect(estimateTokens("abcdefgh")).toBe(3);
    // Text that only mentions an image block is counted as text.
    const mention = { type: "text", text: '{"type":"image"}' };
    expect(estimateTokens(mention)).toBe(Math.ceil(JSON.stringify(mention).length / 4));
  });
});
