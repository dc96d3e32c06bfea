// Shared by the services (bus) and the SDK, which imports it alone (`@wakeloop/contracts/backoff`) to run in browsers.
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
