import { setTimeout } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { withDeadline } from "./deadline";

describe("withDeadline", () => {
  it("reports work that finishes in time", async () => {
    expect(await withDeadline(1_000, async () => "value")).toEqual({ status: "done" });
  });

  it("reports a failure with its error", async () => {
    const error = new Error("boom");
    expect(await withDeadline(1_000, () => Promise.reject(error))).toEqual({ status: "failed", error });
  });

  it("stops waiting at the deadline and aborts the work's signal", async () => {
    let seen: AbortSignal | undefined;
    const started = Date.now();
    const outcome = await withDeadline(50, async (signal) => {
      seen = signal;
      await setTimeout(10_000, undefined, { ref: false });
    });
    expect(outcome).toEqual({ status: "timed_out" });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(seen?.aborted).toBe(true);
  });
});
