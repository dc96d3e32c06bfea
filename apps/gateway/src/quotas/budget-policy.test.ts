import { WakeloopError } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { capInherited, defaultBudget, requireOwnerForBudget, requireWithinCap } from "./budget-policy";

const none = { defaultTokens: null, maxTokens: null };
const capped = { defaultTokens: 10_000, maxTokens: 50_000 };

describe("budget policy", () => {
  it("defaults to the operator's default, else the cap, else unlimited", () => {
    expect(defaultBudget(capped)).toEqual({ max_total_tokens: 10_000 });
    expect(defaultBudget({ defaultTokens: null, maxTokens: 50_000 })).toEqual({ max_total_tokens: 50_000 });
    expect(defaultBudget(none)).toEqual({ max_total_tokens: null });
    expect(defaultBudget({ defaultTokens: 90_000, maxTokens: 50_000 })).toEqual({ max_total_tokens: 50_000 });
  });

  it("refuses a budget above the cap, and unlimited when there is one", () => {
    expect(requireWithinCap({ max_total_tokens: 50_000 }, capped)).toEqual({ max_total_tokens: 50_000 });
    expect(() => requireWithinCap({ max_total_tokens: 50_001 }, capped)).toThrow(WakeloopError);
    expect(() => requireWithinCap({ max_total_tokens: null }, capped)).toThrow(/at most 50000/);
    expect(requireWithinCap({ max_total_tokens: null }, none)).toEqual({ max_total_tokens: null });
  });

  it("holds an inherited budget to the cap", () => {
    expect(capInherited({ max_total_tokens: null }, capped)).toEqual({ max_total_tokens: 50_000 });
    expect(capInherited({ max_total_tokens: 90_000 }, capped)).toEqual({ max_total_tokens: 50_000 });
    expect(capInherited({ max_total_tokens: 20_000 }, capped)).toEqual({ max_total_tokens: 20_000 });
    expect(capInherited({ max_total_tokens: null }, none)).toEqual({ max_total_tokens: null });
    // The token cap leaves an inherited money limit as it is.
    expect(capInherited({ max_total_tokens: 90_000, max_cost_micro_usd: 2_000_000 }, capped)).toEqual({
      max_total_tokens: 50_000,
      max_cost_micro_usd: 2_000_000,
    });
  });

  it("lets only owners set budgets", () => {
    expect(() => requireOwnerForBudget("owner")).not.toThrow();
    expect(() => requireOwnerForBudget("member")).toThrow(expect.objectContaining({ code: "forbidden" }));
  });
});
