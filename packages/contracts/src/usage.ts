import { z } from "zod";

export const TokenUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative().default(0),
  cache_read_input_tokens: z.number().int().nonnegative().default(0),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

export const ZERO_USAGE: TokenUsage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

/** Two usages added field by field (a session's running total and one more model call). */
export function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  return {
    input_tokens: total.input_tokens + more.input_tokens,
    output_tokens: total.output_tokens + more.output_tokens,
    cache_creation_input_tokens: total.cache_creation_input_tokens + more.cache_creation_input_tokens,
    cache_read_input_tokens: total.cache_read_input_tokens + more.cache_read_input_tokens,
  };
}

/**
 * A budget for a whole session; `null` means unlimited. Reaching either limit stops the session with
 * `budget_reached`. The money limit counts the session's own model requests at the operator's prices
 * (`cost_micro_usd`); it cannot stop a session whose cost is unknown (a model with no price).
 */
export const Budget = z.strictObject({
  max_total_tokens: z.number().int().positive().nullable(),
  /** In millionths of a US dollar (5 000 000 is $5); absent on budgets set before money limits. */
  max_cost_micro_usd: z.number().int().positive().nullable().optional(),
});
export type Budget = z.infer<typeof Budget>;
