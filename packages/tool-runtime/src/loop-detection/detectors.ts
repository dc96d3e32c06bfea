import { type LoopCall, type LoopCallRecord, sameCall } from "./call-record";

/**
 * Each detector counts how far the pattern goes, including the call about to run. `history` is the
 * recent finished calls, oldest first, already cut to the window.
 */
export type LoopDetector = "generic_repeat" | "poll_no_progress" | "ping_pong";

/** Calls in the window with the same name and arguments as `next`, whatever their results. */
export function genericRepeatCount(history: readonly LoopCallRecord[], next: LoopCall): number {
  return 1 + history.filter((record) => sameCall(record, next)).length;
}

/**
 * The latest run of the same call whose result did not change (other calls may sit in between):
 * polling a running command that prints new output is progress; the same answer again is not.
 */
export function pollNoProgressCount(history: readonly LoopCallRecord[], next: LoopCall): number {
  const same = history.filter((record) => sameCall(record, next));
  const last = same.at(-1);
  if (!last) return 1;
  let count = 1;
  for (let i = same.length - 1; i >= 0 && same[i]?.resultHash === last.resultHash; i--) count++;
  return count;
}

/**
 * Length of the alternation A,B,A,B,… that ends with `next` (A ≠ B), counted only while each side keeps
 * returning the result it returned last time in the alternation.
 */
export function pingPongCount(history: readonly LoopCallRecord[], next: LoopCall): number {
  const previous = history.at(-1);
  if (!previous || sameCall(previous, next)) return 1;
  const results: Array<string | undefined> = [undefined, previous.resultHash];
  let count = 2;
  for (let i = history.length - 2; i >= 0; i--) {
    const record = history[i] as LoopCallRecord;
    const side = count % 2; // 0: same side as `next`, 1: same side as `previous`
    if (!sameCall(record, side === 0 ? next : previous)) break;
    if (results[side] !== undefined && results[side] !== record.resultHash) break;
    results[side] = record.resultHash;
    count++;
  }
  return count;
}
