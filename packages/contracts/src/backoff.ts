// Shared by the services (bus, model providers) and the SDK, which imports it alone (`@wakeloop/contracts/backoff`) to run in browsers.
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

/** Exponential delay for the n-th consecutive failure (0-based), capped. */
export function backoffDelay(failures: number, { initialMs, maxMs }: BackoffOptions): number {
  return Math.min(maxMs, initialMs * 2 ** Math.min(failures, 30));
}

/** Resolves after `ms`, or at once when `signal` aborts: waiting must never delay a shutdown. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * How long a server asked to be left alone: `retry-after-ms` (OpenAI's), else `Retry-After` in seconds
 * or as an HTTP date; undefined when it said nothing usable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
