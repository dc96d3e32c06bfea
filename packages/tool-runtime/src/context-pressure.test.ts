import { describe, expect, it } from "vitest";
import { describeContextBudget } from "./context-pressure";

const base = {
  contextWindowTokens: 10_000,
  maxOutputTokens: 2_000,
  systemTokens: 500,
  toolSchemaTokens: 500,
  historyTokens: 1_000,
  selectedHistoryTokens: 1_000,
  availableTools: ["session_get_snapshot", "session_get_events", "session_get_trace"],
};

describe("describeContextBudget", () => {
  it("reports low pressure and recommends nothing when the request fits easily", () => {
    const budget = describeContextBudget(base);
    expect(budget).toMatchObject({ utilization: 0.25, history_dropped_tokens: 0 });
    expect(budget.pressure).toEqual({ level: "low", reasons: [], recommended_tools: [] });
  });

  it("is elevated past 60% and recommends only the reread tools the session has", () => {
    const budget = describeContextBudget({ ...base, historyTokens: 4_000, selectedHistoryTokens: 4_000 });
    expect(budget.utilization).toBe(0.63);
    expect(budget.pressure.level).toBe("elevated");
    expect(budget.pressure.recommended_tools).toEqual([
      "session_get_snapshot",
      "session_get_events",
      "session_get_trace",
    ]);
  });

  it("is high when history is dropped or the request nearly fills the budget", () => {
    const dropped = describeContextBudget({ ...base, historyTokens: 9_000, selectedHistoryTokens: 5_500 });
    expect(dropped.history_dropped_tokens).toBe(3_500);
    expect(dropped.pressure.level).toBe("high");
    expect(dropped.pressure.reasons).toHaveLength(2);
  });

  it("flags tool schemas that crowd out history", () => {
    const heavy = describeContextBudget({ ...base, toolSchemaTokens: 2_500 });
    expect(heavy.pressure).toMatchObject({ level: "elevated", reasons: ["tool schemas take 2500 tokens"] });
  });
});
