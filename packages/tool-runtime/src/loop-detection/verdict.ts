import type { LoopDetectionConfig } from "@wakeloop/contracts";
import type { LoopCall, LoopCallRecord } from "./call-record";
import { genericRepeatCount, type LoopDetector, pingPongCount, pollNoProgressCount } from "./detectors";

/**
 * What to do with the call about to run:
 * - `ok`: run it;
 * - `warn`: run it and add `message` as a runtime note for the model;
 * - `block`: do not run it; `message` is its `is_error` result;
 * - `stop`: do not run it and end the wake with `session.error{type:"loop_detected"}`.
 */
export type LoopVerdict =
  | { verdict: "ok" }
  | { verdict: "warn" | "block" | "stop"; detector: LoopDetector; count: number; message: string };

/**
 * Runs the detectors that apply (poll calls: poll-without-progress; other calls: generic repeat; all:
 * ping-pong) over the last `window - 1` finished calls plus `next`, and grades the highest count
 * against the thresholds. Pure: the same history and call always give the same verdict.
 */
export function checkLoop(
  history: readonly LoopCallRecord[],
  next: LoopCall,
  config: LoopDetectionConfig,
): LoopVerdict {
  if (!config.enabled) return { verdict: "ok" };
  const recent = history.slice(Math.max(0, history.length - (config.window - 1)));
  const counts: Array<[LoopDetector, number]> = [
    next.poll
      ? ["poll_no_progress", pollNoProgressCount(recent, next)]
      : ["generic_repeat", genericRepeatCount(recent, next)],
    ["ping_pong", pingPongCount(recent, next)],
  ];
  const [detector, count] = counts.reduce((best, entry) => (entry[1] > best[1] ? entry : best));
  const verdict =
    count >= config.stop_at
      ? "stop"
      : count >= config.block_at
        ? "block"
        : count >= config.warn_at
          ? "warn"
          : "ok";
  if (verdict === "ok") return { verdict };
  const what = describe(detector, count, next, recent, config.window);
  const message =
    verdict === "warn"
      ? `Loop warning: ${what}. If this is not making progress, change approach.`
      : verdict === "block"
        ? `Blocked by loop detection: ${what}. Use different arguments or another tool, or end your turn.`
        : `Stopped by loop detection: ${what}.`;
  return { verdict, detector, count, message };
}

function describe(
  detector: LoopDetector,
  count: number,
  next: LoopCall,
  recent: readonly LoopCallRecord[],
  window: number,
): string {
  switch (detector) {
    case "generic_repeat":
      return `${next.name} was called with the same arguments ${count} times in the last ${window} tool calls`;
    case "poll_no_progress":
      return `${next.name} was polled ${count} times with the same arguments and an unchanged result`;
    case "ping_pong":
      return `the last ${count} tool calls alternate between ${next.name} and ${recent.at(-1)?.name} with unchanged results`;
  }
}
