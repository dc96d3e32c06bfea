import { describe, expect, it } from "vitest";
import { PriceTable } from "./cost";
import { addCost, costOf, microUsdText } from "./money";

const sonnet = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

describe("costOf", () => {
  it("prices each kind of token at its own rate, in micro-USD", () => {
    const usage = {
      input_tokens: 1_000,
      output_tokens: 200,
      cache_read_input_tokens: 10_000,
      cache_creation_input_tokens: 2_000,
    };
    // 1000×3 + 200×15 + 10000×0.3 + 2000×3.75 = 3000 + 3000 + 3000 + 7500 micro-USD.
    expect(costOf(usage, sonnet)).toBe(16_500);
  });

  it("stays exact for sums floating point would round, and rounds half a micro-dollar up", () => {
    const usage = {
      input_tokens: 1,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    };
    expect(costOf(usage, { ...sonnet, input: 0.5 })).toBe(1);
    expect(costOf(usage, { ...sonnet, input: 0.4 })).toBe(0);
    const huge = { ...usage, input_tokens: 4_000_000_000_000 };
    expect(costOf(huge, { ...sonnet, input: 0.1 })).toBe(400_000_000_000);
  });

  it("is unknown (null), not free, for a model without a price", () => {
    const usage = {
      input_tokens: 5,
      output_tokens: 5,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    };
    expect(costOf(usage, undefined)).toBeNull();
    expect(addCost(10, null)).toBeNull();
    expect(addCost(null, 10)).toBeNull();
    expect(addCost(10, 5)).toBe(15);
  });

  it("refuses a price table with a missing or negative price", () => {
    expect(PriceTable.safeParse({ m: { input: 1, output: 1, cache_read: 0.1 } }).success).toBe(false);
    expect(PriceTable.safeParse({ m: { ...sonnet, input: -1 } }).success).toBe(false);
    expect(PriceTable.parse({ m: sonnet })).toEqual({ m: sonnet });
  });
});

describe("microUsdText", () => {
  it("shows dollars exactly, with at least cents, and unknown for null", () => {
    expect(microUsdText(16_500)).toBe("$0.0165");
    expect(microUsdText(5_000_000)).toBe("$5.00");
    expect(microUsdText(1)).toBe("$0.000001");
    expect(microUsdText(1_230_000)).toBe("$1.23");
    expect(microUsdText(0)).toBe("$0.00");
    expect(microUsdText(null)).toBe("unknown");
  });
});
