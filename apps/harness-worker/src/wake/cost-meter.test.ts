import { describe, expect, it } from "vitest";
import type { WakeMetrics } from "../wake-metrics";
import { CostMeter } from "./cost-meter";

const usage = (input: number) => ({
  input_tokens: input,
  output_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});
const prices = { priced: { input: 1, output: 1, cache_read: 0.1, cache_write: 1.25 } };

/** Records the costs the meter reports, as the worker's metrics would count them. */
function recordedCosts(): { metrics: WakeMetrics; costs: Array<[string, number]> } {
  const costs: Array<[string, number]> = [];
  const metrics = { cost: (_provider: string, model: string, micro: number) => costs.push([model, micro]) };
  return { metrics: metrics as unknown as WakeMetrics, costs };
}

describe("CostMeter", () => {
  it("adds each step to the wake's and the session's totals", () => {
    const { metrics, costs } = recordedCosts();
    const meter = new CostMeter(prices, 500, metrics);
    expect(meter.charge([{ provider: "anthropic", model: "priced", usage: usage(1_000) }])).toEqual({
      step_micro_usd: 1_000,
      wake_micro_usd: 1_000,
      session_micro_usd: 1_500,
    });
    const step = [
      { provider: "openai", model: "priced", usage: usage(2_000) },
      { provider: "openai", model: "priced", usage: usage(3_000) },
    ];
    expect(meter.charge(step)).toEqual({
      step_micro_usd: 5_000,
      wake_micro_usd: 6_000,
      session_micro_usd: 6_500,
    });
    expect(costs).toEqual([
      ["priced", 1_000],
      ["priced", 2_000],
      ["priced", 3_000],
    ]);
  });

  it("makes the totals unknown from a request without a price on, and counts no cost for it", () => {
    const { metrics, costs } = recordedCosts();
    const meter = new CostMeter(prices, 0, metrics);
    const unknown = meter.charge([{ provider: "anthropic", model: "unpriced", usage: usage(10) }]);
    expect(unknown).toEqual({ step_micro_usd: null, wake_micro_usd: null, session_micro_usd: null });
    const later = meter.charge([{ provider: "anthropic", model: "priced", usage: usage(10) }]);
    expect(later).toEqual({ step_micro_usd: 10, wake_micro_usd: null, session_micro_usd: null });
    expect(costs).toEqual([["priced", 10]]);
  });

  it("keeps a session whose cost was already unknown unknown", () => {
    const meter = new CostMeter(prices, null, recordedCosts().metrics);
    expect(meter.charge([{ provider: "anthropic", model: "priced", usage: usage(10) }])).toEqual({
      step_micro_usd: 10,
      wake_micro_usd: 10,
      session_micro_usd: null,
    });
  });
});
