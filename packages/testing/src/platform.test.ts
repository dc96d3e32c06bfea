import { describe, expect, it } from "vitest";
import { Platform } from "./platform";

describe("Platform.start", () => {
  // Node refuses this flag in NODE_OPTIONS, so the worker exits at once. The failure must reach the
  // caller alone: a second, unawaited rejection would end the test process before `stop` ran
  // (vitest reports it as an unhandled error, failing this file).
  it("fails with the app that did not start, and stops what it started", async () => {
    await expect(Platform.start({ workers: 1, workerEnv: { NODE_OPTIONS: "--trace-gc" } })).rejects.toThrow(
      /harness-worker: no "ready" log.*--trace-gc is not allowed/s,
    );
  }, 60_000);
});
