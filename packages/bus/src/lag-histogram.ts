export interface LagSnapshot {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

// Log-spaced buckets, 8 per doubling starting at 10 µs: a quantile is off by at most ~9%, and 256
// buckets reach past 5 minutes, beyond any lag worth telling apart.
const BASE_MS = 0.01;
const PER_DOUBLING = 8;
const BUCKETS = 256;

function bucketOf(ms: number): number {
  if (ms <= BASE_MS) return 0;
  return Math.min(BUCKETS - 1, Math.ceil(Math.log2(ms / BASE_MS) * PER_DOUBLING));
}

function upperBound(bucket: number): number {
  return BASE_MS * 2 ** (bucket / PER_DOUBLING);
}

/** A small fixed-memory latency histogram; `snapshot()` is what a status page or benchmark reads. */
export class LagHistogram {
  private counts = new Array<number>(BUCKETS).fill(0);
  private count = 0;
  private max = 0;

  record(ms: number): void {
    const value = Math.max(0, ms);
    const bucket = bucketOf(value);
    this.counts[bucket] = (this.counts[bucket] ?? 0) + 1;
    this.count += 1;
    this.max = Math.max(this.max, value);
  }

  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      seen += this.counts[bucket] ?? 0;
      if (seen >= rank) return Math.min(upperBound(bucket), this.max);
    }
    return this.max;
  }

  snapshot(): LagSnapshot {
    return {
      count: this.count,
      p50Ms: this.quantile(0.5),
      p95Ms: this.quantile(0.95),
      p99Ms: this.quantile(0.99),
      maxMs: this.max,
    };
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.max = 0;
  }
}
