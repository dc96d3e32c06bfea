import { WakeloopError } from "@wakeloop/contracts";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

export interface RequestRateSettings {
  /** Requests one API key may make per window; 0 turns the limit off. */
  requests: number;
  windowSeconds: number;
}

export interface RequestRate {
  /** Counts one request of the key; throws `rate_limited` (429, with when to retry) past the limit. */
  take(keyId: string): Promise<void>;
}

/**
 * Requests per API key, counted in this gateway process. With several replicas behind a load balancer
 * a key can make up to `replicas × requests` per window: the limit protects each replica (and the
 * Postgres it queries) from one key's burst; it is not a billing-exact global count. Counting in
 * memory keeps the limit off the database's write path and working while Postgres is down.
 */
export function createRequestRate(settings: RequestRateSettings): RequestRate {
  if (settings.requests === 0) return { take: async () => {} };
  const limiter = new RateLimiterMemory({ points: settings.requests, duration: settings.windowSeconds });
  return {
    async take(keyId) {
      try {
        await limiter.consume(keyId);
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        const retryAfterSeconds = Math.max(1, Math.ceil(refusal.msBeforeNext / 1_000));
        throw new WakeloopError(
          "rate_limited",
          `this API key made more than ${settings.requests} requests in ${settings.windowSeconds} s; retry in ${retryAfterSeconds} s`,
          {
            details: {
              limit: settings.requests,
              window_seconds: settings.windowSeconds,
              retry_after_seconds: retryAfterSeconds,
            },
          },
        );
      }
    },
  };
}
