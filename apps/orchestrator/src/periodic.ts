import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@wakeloop/telemetry";

/**
 * Runs `task` now and then every `intervalMs` until `signal` aborts. A failed run is logged and the next
 * one comes on schedule: every periodic job here is idempotent, so the next run repairs what this missed.
 */
export async function runEvery(
  name: string,
  intervalMs: number,
  signal: AbortSignal,
  log: Logger,
  task: () => Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await task();
    } catch (err) {
      log.warn({ err, task: name }, "periodic task failed; trying again next interval");
    }
    await sleep(intervalMs, undefined, { signal }).catch(() => undefined);
  }
}
