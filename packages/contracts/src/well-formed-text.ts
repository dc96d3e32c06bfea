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

/** A step of a path, linked to the one before it: a deep walk then costs no copy per level. */
interface PathStep {
  key: string | number;
  parent: PathStep | null;
}

/**
 * Where the first NUL or lone surrogate is (a path of keys and indexes), or null when there is none.
 * Iterative, so a value of any depth is checked without running out of stack.
 */
export function findIllFormedText(value: unknown): (string | number)[] | null {
  const pending: { value: unknown; at: PathStep | null }[] = [{ value, at: null }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, at } = next;
    if (typeof current === "string") {
      if (!isWellFormedText(current)) return pathOf(at);
      continue;
    }
    // Any object's own fields: parsed request input may come without Object's prototype.
    if (typeof current !== "object" || current === null) continue;
    const entries: [string | number, unknown][] = Array.isArray(current)
      ? [...current.entries()]
      : Object.entries(current);
    // Pushed last to first, so the first bad text in document order is the one found, a key before
    // its value.
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, item] = entries[index] as [string | number, unknown];
      const step = { key, parent: at };
      pending.push({ value: item, at: step });
      if (typeof key === "string") pending.push({ value: key, at: step });
    }
  }
  return null;
}

function pathOf(step: PathStep | null): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at = step; at !== null; at = at.parent) path.push(at.key);
  return path.reverse();
}

/** JSON-shaped objects only: class instances (Dates, errors) are left as they are. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
