/**
 * How deeply untrusted JSON may nest arrays and objects. `JSON.parse` reads any depth, but what walks
 * the value afterwards (the well-formed text check, zod, stable serialisation, Postgres' jsonb input)
 * recurses and runs out of stack a few thousand levels down. No API body, bus message or tool argument
 * of ours needs more than a few dozen, so each door that parses untrusted JSON refuses deeper values,
 * and nothing behind it ever sees one.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether `value` nests arrays and objects deeper than `maxDepth` (a bare array or object is depth 1).
 * Iterative, so checking a value of any depth is safe; it stops at the first container past the limit.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue;
    if (next.depth > maxDepth) return true;
    for (const item of Object.values(next.value))
      if (typeof item === "object" && item !== null) pending.push({ value: item, depth: next.depth + 1 });
  }
  return false;
}

/** The sentence every door uses to refuse a value past the limit, so clients and logs see one wording. */
export function jsonDepthMessage(what: string, maxDepth: number = MAX_JSON_DEPTH): string {
  return `${what} nests arrays and objects deeper than ${maxDepth} levels, the limit for JSON input (MAX_JSON_DEPTH)`;
}
