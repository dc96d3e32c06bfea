import { z } from "zod";

/**
 * What one model's tokens cost, in US dollars per million tokens, as the provider's price list says.
 * `cache_write` is the price of writing the prompt cache (Anthropic: 1.25× input for the 5-minute
 * lifetime, 2× for one hour; OpenAI: none, 0); `cache_read` of reading it (about a tenth of input).
 */
export const ModelPrice = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cache_read: z.number().nonnegative(),
  cache_write: z.number().nonnegative(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

/** The operator's prices by model id (the agent's `model.id`). A model not listed has no known cost. */
export const PriceTable = z.record(z.string().min(1), ModelPrice);
export type PriceTable = z.infer<typeof PriceTable>;

/** Money in integer millionths of a US dollar: sums and comparisons stay exact. */
export const MicroUsd = z.number().int().nonnegative();

/** Cost carried by a `session.usage` event; null where a model request's model has no price. */
export const UsageCost = z.object({
  /** The model requests this event reports: a step's request, or the `llm_generate` calls of its tools. */
  step_micro_usd: MicroUsd.nullable(),
  /** The wake's requests so far. */
  wake_micro_usd: MicroUsd.nullable(),
  /** The session's requests so far (its own; sub-sessions report theirs). */
  session_micro_usd: MicroUsd.nullable(),
});
export type UsageCost = z.infer<typeof UsageCost>;
