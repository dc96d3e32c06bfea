/**
 * Fields that change on every call without meaning progress, dropped (at any depth) before arguments
 * and results are hashed, so two polls that differ only in them count as the same:
 * - time: `timestamp`, `ts`, `time`, `date`, `now`, and any key ending in `_at` (`created_at`, …);
 * - durations: `duration`, `elapsed`, `took`, `latency`, and any key ending in `_ms` (`duration_ms`,
 *   `timeout_ms`, …);
 * - per-call ids: `id`, `request_id`, `trace_id`, `span_id`, `event_id`, `command_id`, `call_id`,
 *   `tool_use_id`, `nonce`, `seq`.
 * Ids that name a resource the call works on (`process_id`, `shell_id`, `session_id`) are kept: polling
 * two different processes is not a repeat. Keys compare case-insensitively with `-` read as `_`; string
 * values that are a whole ISO-8601 timestamp are replaced by a placeholder wherever they appear.
 */
export const VOLATILE_KEYS: ReadonlySet<string> = new Set([
  "timestamp",
  "ts",
  "time",
  "date",
  "now",
  "duration",
  "elapsed",
  "took",
  "latency",
  "id",
  "request_id",
  "trace_id",
  "span_id",
  "event_id",
  "command_id",
  "call_id",
  "tool_use_id",
  "nonce",
  "seq",
]);

const VOLATILE_SUFFIXES = ["_at", "_ms"];
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

export function isVolatileKey(key: string): boolean {
  const normalized = key.toLowerCase().replaceAll("-", "_");
  return VOLATILE_KEYS.has(normalized) || VOLATILE_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
}

export function stripVolatile(value: unknown): unknown {
  if (typeof value === "string") return ISO_TIMESTAMP.test(value) ? "<timestamp>" : value;
  if (Array.isArray(value)) return value.map(stripVolatile);
  if (value === null || typeof value !== "object") return value;
  const kept: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    if (!isVolatileKey(key)) kept[key] = stripVolatile(item);
  }
  return kept;
}
