/** Latency summary of one measured series (milliseconds), as every benchmark reports it. */
export interface LatencySummary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export const round2 = (value: number) => Math.round(value * 100) / 100;

/** Nearest-rank percentiles, rounded to 0.01. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    round2(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0);
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: round2(sorted.at(-1) ?? 0) };
}

/** `run` ten times to warm up, then `iterations` times one after another, each timed. */
export async function measureLatency(
  iterations: number,
  run: (index: number) => Promise<unknown>,
): Promise<LatencySummary> {
  for (let index = 0; index < 10; index++) await run(index);
  const samples: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const before = performance.now();
    await run(index);
    samples.push(performance.now() - before);
  }
  return summarize(samples);
}
