import type { SessionState } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { initialSessionState } from "./reducer";
import { budgetExhausted, wakeReason } from "./wake-decision";

const withBudget = (budget: SessionState["budget"], cost: number | null): SessionState => ({
  ...initialSessionState({ title: null, metadata: {}, budget }),
  cost_micro_usd: cost,
  unprocessed_message_ids: ["evt_1"],
});

describe("budgetExhausted", () => {
  it("stops a session whose cost reached its money limit, like a token limit", () => {
    const budget = { max_total_tokens: null, max_cost_micro_usd: 1_000 };
    expect(budgetExhausted(withBudget(budget, 999))).toBe(false);
    expect(budgetExhausted(withBudget(budget, 1_000))).toBe(true);
    expect(wakeReason(withBudget(budget, 1_000))).toBeNull();
    expect(wakeReason(withBudget(budget, 999))).toBe("user_message");
  });

  it("cannot hold a session whose cost is unknown to a money limit", () => {
    expect(budgetExhausted(withBudget({ max_total_tokens: null, max_cost_micro_usd: 1 }, null))).toBe(false);
    expect(budgetExhausted(withBudget({ max_total_tokens: null }, 1_000_000))).toBe(false);
  });
});
