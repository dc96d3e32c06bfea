import { describe, expect, it } from "vitest";
import { LagHistogram } from "./lag-histogram";

describe("LagHistogram", () => {
  it("reports quantiles within the bucket resolution", () => {
    const histogram = new LagHistogram();
    for (let ms = 1; ms <= 1000; ms++) histogram.record(ms);
    const snapshot = histogram.snapshot();
    expect(snapshot.count).toBe(1000);
    expect(snapshot.p50Ms).toBeGreaterThanOrEqual(500);
    expect(snapshot.p50Ms).toBeLessThanOrEqual(500 * 1.1);
    expect(snapshot.p95Ms).toBeGreaterThanOrEqual(950);
    expect(snapshot.p95Ms).toBeLessThanOrEqual(1000);
    expect(snapshot.maxMs).toBe(1000);
  });

  it("is empty after reset and never reports more than the maximum seen", () => {
    const histogram = new LagHistogram();
    histogram.record(3);
    expect(histogram.quantile(1)).toBe(3);
    histogram.reset();
    expect(histogram.snapshot()).toEqual({ count: 0, p50Ms: 0, p95Ms: 0, p99Ms: 0, maxMs: 0 });
  });
});
