import { describe, expect, it } from "vitest";
import { statusText } from "./status-badge";

describe("session status as shown", () => {
  it("splits idle by why the session stopped, and names a termination's reason", () => {
    const idle = { status: "idle", termination_reason: null } as const;
    expect(statusText({ ...idle, stop_reason: { type: "requires_action", event_ids: ["e"] } })).toBe(
      "waiting on approval",
    );
    expect(statusText({ ...idle, stop_reason: { type: "budget_reached" } })).toBe("idle (budget_reached)");
    expect(statusText({ ...idle, stop_reason: null })).toBe("idle");
    expect(statusText({ status: "running", stop_reason: null, termination_reason: null })).toBe("running");
    expect(statusText({ status: "terminated", stop_reason: null, termination_reason: "archived" })).toBe(
      "terminated (archived)",
    );
  });
});
