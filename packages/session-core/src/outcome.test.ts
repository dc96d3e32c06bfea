import { describe, expect, it } from "vitest";
import { nextOutcomeStep, outcomeTrend, promotionReady } from "./outcome";

const attempt = (score: number, passed = false) => ({ score, passed });

describe("outcomeTrend", () => {
  it("is null before any grade and first_iteration after one", () => {
    expect(outcomeTrend([])).toBeNull();
    expect(outcomeTrend([attempt(0.2)])).toBe("first_iteration");
  });

  it("compares the latest attempt with the one before, ignoring noise", () => {
    expect(outcomeTrend([attempt(0.9), attempt(0.2), attempt(0.5)])).toBe("improving");
    expect(outcomeTrend([attempt(0.5), attempt(0.2)])).toBe("regressing");
    expect(outcomeTrend([attempt(0.5), attempt(0.505)])).toBe("stable");
    expect(outcomeTrend([attempt(0.5), attempt(0.5)])).toBe("stable");
  });
});

describe("promotionReady", () => {
  it("needs a passing latest attempt that did not regress", () => {
    expect(promotionReady([])).toBe(false);
    expect(promotionReady([attempt(0.4)])).toBe(false);
    expect(promotionReady([attempt(1, true)])).toBe(true);
    expect(promotionReady([attempt(0.5), attempt(1, true)])).toBe(true);
    expect(promotionReady([attempt(1, true), attempt(1, true)])).toBe(true);
    expect(promotionReady([attempt(1, true), attempt(0.8, true)])).toBe(false);
    expect(promotionReady([attempt(1, true), attempt(0.3)])).toBe(false);
  });
});

describe("nextOutcomeStep", () => {
  it("points to evaluation first and to the history when attempts stall or regress", () => {
    expect(nextOutcomeStep([])).toBe("outcome_evaluate");
    expect(nextOutcomeStep([attempt(0.3)])).toBe("outcome_evaluate");
    expect(nextOutcomeStep([attempt(0.3), attempt(0.6)])).toBe("outcome_evaluate");
    expect(nextOutcomeStep([attempt(0.3), attempt(0.3)])).toBe("outcome_history");
    expect(nextOutcomeStep([attempt(0.6), attempt(0.3)])).toBe("outcome_history");
    expect(nextOutcomeStep([attempt(1, true)])).toBeNull();
  });
});
