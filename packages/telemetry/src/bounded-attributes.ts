import type { Attributes } from "@opentelemetry/api";

/** The label value that stands for every value past a metric's limit. */
export const OTHER_LABEL_VALUE = "_other";

/**
 * Attribute sets for a metric, built once per distinct combination of values and reused on every
 * recording, so the hot path allocates no attribute object. Some values come from tenants (model ids
 * of OpenAI-compatible servers, custom and MCP tool names); past `limit` distinct combinations every new
 * one is recorded under `_other` in each value, which keeps the series a tenant can create bounded.
 */
export function boundedAttributes<Values extends string[]>(
  limit: number,
  build: (...values: Values) => Attributes,
): (...values: Values) => Attributes {
  const sets = new Map<string, Attributes>();
  let other: Attributes | undefined;
  return (...values) => {
    const key = values.join("\u0000");
    const known = sets.get(key);
    if (known !== undefined) return known;
    if (sets.size >= limit) {
      other ??= Object.freeze(build(...(values.map(() => OTHER_LABEL_VALUE) as Values)));
      return other;
    }
    const created = Object.freeze(build(...values));
    sets.set(key, created);
    return created;
  };
}
