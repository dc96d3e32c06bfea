// Money arithmetic and display, without schemas: the SDK and the console import it alone
// (`@wakeloop/contracts/money`) to run in browsers.
import type { ModelPrice } from "./cost";
import type { TokenUsage } from "./usage";

const MICRO = 1_000_000n;

/** A price per million tokens as millionths of a dollar per million tokens; prices carry at most 6 decimals. */
function microPerMillion(usdPerMillion: number): bigint {
  return BigInt(Math.round(usdPerMillion * 1_000_000));
}

/**
 * What `usage` costs at `price`, in micro-USD rounded to the nearest (half up); null without a price.
 * Products are taken in bigint so a large usage times a price never loses precision.
 */
export function costOf(usage: TokenUsage, price: ModelPrice | undefined): number | null {
  if (price === undefined) return null;
  const total =
    BigInt(usage.input_tokens) * microPerMillion(price.input) +
    BigInt(usage.output_tokens) * microPerMillion(price.output) +
    BigInt(usage.cache_read_input_tokens) * microPerMillion(price.cache_read) +
    BigInt(usage.cache_creation_input_tokens) * microPerMillion(price.cache_write);
  return Number((total + MICRO / 2n) / MICRO);
}

/** Two costs added; unknown (null) stays unknown, so a total never passes off part of a cost as all of it. */
export function addCost(total: number | null, more: number | null): number | null {
  return total === null || more === null ? null : total + more;
}

/** Micro-USD as dollars for people, exact: `$0.0165`, `$5.00`; null (unknown) as `unknown`. */
export function microUsdText(micro: number | null): string {
  if (micro === null) return "unknown";
  const cents = String(micro % 1_000_000)
    .padStart(6, "0")
    .replace(/0{1,4}$/, (zeros) => zeros.slice(0, Math.max(0, zeros.length - 4)));
  return `$${Math.floor(micro / 1_000_000)}.${cents.padEnd(2, "0")}`;
}
