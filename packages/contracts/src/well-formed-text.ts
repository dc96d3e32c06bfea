/**
 * Text that Postgres and JSON can always hold. Postgres `text`/`jsonb` refuse U+0000, and a lone UTF-16
 * surrogate has no UTF-8 encoding, so one such character in a stored value fails the whole statement:
 * in a tool's or model's output it would fail every wake of the session. Inbound API input is refused
 * instead (`findIllFormedText`); output the platform does not control is repaired (`toWellFormedText`).
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point
const ILL_FORMED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const REPLACEMENT = "\uFFFD";

export function isWellFormedText(text: string): boolean {
  ILL_FORMED.lastIndex = 0;
  return !ILL_FORMED.test(text);
}

/**
 * Every NUL and lone surrogate in strings and keys, at any depth, replaced by U+FFFD. Only what holds a
 * replacement is copied: a value that is well-formed already (nearly always) comes back as it is.
 */
export function toWellFormedText<T>(value: T): T {
  return repair(value) as T;
}

function repair(value: unknown): unknown {
  if (typeof value === "string")
    return isWellFormedText(value) ? value : value.replace(ILL_FORMED, REPLACEMENT);
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const repaired = repair(item);
      if (copy === null && repaired !== item) copy = value.slice(0, index);
      copy?.push(repaired);
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  const entries = Object.entries(value);
  let copy: Record<string, unknown> | null = null;
  for (let index = 0; index < entries.length; index++) {
    const [key, item] = entries[index] as [string, unknown];
    const repairedKey = repair(key) as string;
    const repaired = repair(item);
    if (copy === null && (repairedKey !== key || repaired !== item))
      copy = Object.fromEntries(entries.slice(0, index));
    if (copy !== null) copy[repairedKey] = repaired;
  }
  return copy ?? value;
}

/** Where the first NUL or lone surrogate is (a path of keys and indexes), or null when there is none. */
export function findIllFormedText(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | null {
  if (typeof value === "string") return isWellFormedText(value) ? null : path;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findIllFormedText(item, [...path, index]);
      if (found !== null) return found;
    }
    return null;
  }
  // Any object's own fields: parsed request input may come without Object's prototype.
  if (typeof value !== "object" || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (!isWellFormedText(key)) return [...path, key];
    const found = findIllFormedText(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

/** JSON-shaped objects only: class instances (Dates, errors) are left as they are. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
