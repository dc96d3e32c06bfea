import type { PendingAction, SessionState, UserEventInput } from "@wakeloop/contracts";
import { WakeloopError } from "@wakeloop/contracts";
import { initialSessionState } from "@wakeloop/session-core";
import { describe, expect, it } from "vitest";
import { checkUserEvents } from "./check-user-events";

const confirm = (id: string): UserEventInput => ({
  type: "user.tool_confirmation",
  tool_use_id: id,
  result: "allow",
});
const customResult = (id: string): UserEventInput => ({
  type: "user.custom_tool_result",
  custom_tool_use_id: id,
  content: [{ type: "text", text: "42" }],
});

function waitingOn(...actions: PendingAction[]): SessionState {
  return {
    ...initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } }),
    pending_actions: actions,
  };
}

const askTool: PendingAction = {
  event_id: "sevt_ask",
  kind: "tool_confirmation",
  name: "shell_run",
  input: {},
};
const askCustom: PendingAction = {
  event_id: "sevt_custom",
  kind: "custom_tool_result",
  name: "lookup",
  input: {},
};

function codeOf(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error instanceof WakeloopError ? { code: error.code, details: error.details } : error;
  }
  return "accepted";
}

describe("checkUserEvents", () => {
  it("accepts answers for the pending actions of their kind, and other input", () => {
    const state = waitingOn(askTool, askCustom);
    expect(
      codeOf(() =>
        checkUserEvents(state, [
          { type: "user.message", content: [{ type: "text", text: "hi" }] },
          confirm("sevt_ask"),
          customResult("sevt_custom"),
          { type: "user.interrupt" },
        ]),
      ),
    ).toBe("accepted");
  });

  it("rejects a confirmation for an id that is not pending, listing what is", () => {
    expect(codeOf(() => checkUserEvents(waitingOn(askTool), [confirm("sevt_other")]))).toEqual({
      code: "action_not_pending",
      details: { index: 0, tool_use_id: "sevt_other", pending_ids: ["sevt_ask"] },
    });
  });

  it("rejects an answer of the wrong kind", () => {
    expect(
      codeOf(() => checkUserEvents(waitingOn(askTool, askCustom), [confirm("sevt_custom")])),
    ).toMatchObject({
      code: "action_not_pending",
    });
    expect(codeOf(() => checkUserEvents(waitingOn(askTool), [customResult("sevt_ask")]))).toMatchObject({
      code: "action_not_pending",
      details: { index: 0, custom_tool_use_id: "sevt_ask", pending_ids: [] },
    });
  });

  it("rejects answering the same action twice in one batch", () => {
    expect(
      codeOf(() => checkUserEvents(waitingOn(askTool), [confirm("sevt_ask"), confirm("sevt_ask")])),
    ).toMatchObject({
      code: "action_not_pending",
      details: { index: 1 },
    });
  });

  it("refuses any event for a terminated session", () => {
    const terminated: SessionState = { ...waitingOn(), status: "terminated", termination_reason: "archived" };
    expect(codeOf(() => checkUserEvents(terminated, [{ type: "user.interrupt" }]))).toMatchObject({
      code: "session_terminated",
    });
  });
});
