import { addCost, costOf, type PriceTable, type TokenUsage, type UsageCost } from "@wakeloop/contracts";
import type { WakeMetrics } from "../wake-metrics";

/** One model request's usage, as a `session.usage` event records it. */
export interface ModelUsage {
  provider: string;
  model: string;
  usage: TokenUsage;
}

/**
 * A wake's running cost at the operator's prices: each model request (the wake's own and its tools'
 * `llm_generate` calls) is charged as its usage is recorded, and the `session.usage` event that records
 * it carries the step's, the wake's and the session's totals. A request whose model has no price makes
 * the totals unknown (null) from then on rather than understated.
 */
export class CostMeter {
  private wake: number | null = 0;

  constructor(
    private readonly prices: PriceTable,
    /** The session's cost when the wake started (its projection's). */
    private session: number | null,
    private readonly metrics: WakeMetrics,
  ) {}

  /** Charges the requests one `session.usage` event reports. */
  charge(requests: readonly ModelUsage[]): UsageCost {
    let step: number | null = 0;
    for (const { provider, model, usage } of requests) {
      const cost = costOf(usage, this.prices[model]);
      if (cost !== null) this.metrics.cost(provider, model, cost);
      step = addCost(step, cost);
    }
    this.wake = addCost(this.wake, step);
    this.session = addCost(this.session, step);
    return { step_micro_usd: step, wake_micro_usd: this.wake, session_micro_usd: this.session };
  }
}
