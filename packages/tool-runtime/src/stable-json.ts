import { createHash } from "node:crypto";

/**
 * JSON text with object keys sorted at every depth, so two values that are equal as JSON give the same
 * string whatever order their keys were built in. Values JSON cannot hold (undefined, functions) are
 * dropped from objects and written as null in arrays, as JSON.stringify does.
 */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? "null";
}

/** SHA-256 (hex) of the stable JSON text: deterministic on every platform, no I/O. */
export function stableHash(value: unknown): string {
  return createHash("sha256").update(stableStringify(value)).digest("hex");
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  // A null prototype keeps a "__proto__" key (JSON.parse makes it an own key) as plain data.
  const sorted: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(value).sort()) {
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return sorted;
}
