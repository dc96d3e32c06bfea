import { describe, expect, it } from "vitest";
import { childEnding } from "./child-ending";
import { initialSessionState } from "./reducer";

const base = initialSessionState({ title: null, metadata: {}, budget: { max_total_tokens: null } });

describe("childEnding", () => {
  it("a child that ended has finished, with its termination reason", () => {
    for (const reason of ["completed", "error", "archived"] as const) {
      expect(childEnding({ ...base, status: "terminated", termination_reason: reason })).toBe(reason);
    }
  });

  it("a child stopped on its budget or retries has finished: it cannot go on by itself", () => {
    for (const type of ["budget_reached", "retries_exhausted"] as const) {
      expect(childEnding({ ...base, status: "idle", stop_reason: { type } })).toBe(type);
    }
  });

  it("a child that is running, idle after a turn or waiting on a person has not finished", () => {
    expect(childEnding({ ...base, status: "running" })).toBeNull();
    expect(childEnding({ ...base, status: "idle", stop_reason: { type: "end_turn" } })).toBeNull();
    expect(
      childEnding({ ...base, status: "idle", stop_reason: { type: "requires_action", event_ids: ["x"] } }),
    ).toBeNull();
  });
});
