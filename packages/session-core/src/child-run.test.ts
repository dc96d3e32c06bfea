import { describe, expect, it } from "vitest";
import { childRunStatus } from "./child-run";
import { initialSessionState } from "./reducer";

const base = initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } });
const idle = { ...base, status: "idle" as const, stop_reason: { type: "end_turn" as const } };
const within = { used: 1, max: 3, cutOff: false };

describe("childRunStatus", () => {
  it("a run is over when the sub-session finished, with how it finished", () => {
    expect(childRunStatus({ ...base, status: "terminated", termination_reason: "completed" }, within)).toBe(
      "completed",
    );
    expect(childRunStatus({ ...idle, stop_reason: { type: "budget_reached" } }, within)).toBe(
      "budget_reached",
    );
  });

  it("goes on while the sub-session runs, or is idle with input that wakes it within the run", () => {
    expect(childRunStatus({ ...base, status: "running" }, within)).toBeNull();
    expect(childRunStatus({ ...idle, unprocessed_message_ids: ["m1"] }, within)).toBeNull();
  });

  it("ends idle when its turn ended, even on the last request the run allowed", () => {
    expect(childRunStatus(idle, within)).toBe("idle");
    expect(childRunStatus(idle, { used: 3, max: 3, cutOff: false })).toBe("idle");
  });

  it("ends out of cycles when the requests are spent and it had more to do", () => {
    expect(childRunStatus(idle, { used: 3, max: 3, cutOff: true })).toBe("out_of_cycles");
    expect(childRunStatus({ ...idle, unprocessed_message_ids: ["m1"] }, { ...within, used: 3 })).toBe(
      "out_of_cycles",
    );
  });

  it("ends requires_action while the sub-session waits on a person", () => {
    const waiting = {
      ...idle,
      stop_reason: { type: "requires_action" as const, event_ids: ["c1"] },
      pending_actions: [{ event_id: "c1", kind: "tool_confirmation" as const, name: "deploy", input: {} }],
    };
    expect(childRunStatus(waiting, within)).toBe("requires_action");
  });
});
