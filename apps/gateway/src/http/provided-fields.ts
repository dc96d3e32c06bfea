/**
 * The fields of a parsed partial body that the client actually sent. Parsing a `.partial()` schema
 * fills in defaults for absent fields, and an update must not reset a field nobody mentioned.
 */
export function providedFields<T extends object>(parsed: T, raw: unknown): Partial<T> {
  if (typeof raw !== "object" || raw === null) return {};
  const provided: Partial<T> = {};
  for (const key of Object.keys(parsed) as (keyof T)[]) {
    if (Object.hasOwn(raw, key) && (raw as Record<PropertyKey, unknown>)[key] !== undefined) {
      provided[key] = parsed[key];
    }
  }
  return provided;
}
