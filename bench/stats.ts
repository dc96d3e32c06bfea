/** Latency summary of one measured series, in milliseconds. */
export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0);
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: round(sorted.at(-1) ?? 0) };
}

export const round = (value: number) => Math.round(value * 100) / 100;

/** The fake model's clock: epoch milliseconds with sub-millisecond precision, comparable across processes. */
export const now = () => performance.timeOrigin + performance.now();
