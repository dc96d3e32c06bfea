import type { Logger } from "@wakeloop/telemetry";

export interface PullGateOptions {
  /** Resident memory above which no new wake is taken. */
  maxRssBytes: number;
  /** Queries waiting for a pooled Postgres connection above which no new wake is taken. */
  maxDbWaiters: number;
  rssBytes: () => number;
  dbWaiters: () => number;
  log: Logger;
}

/**
 * The worker's answer to "may I pull more wake jobs?" (the consumer asks before each pull). With
 * hundreds of slots, slots alone do not bound a process: a burst of wakes with large histories can
 * outgrow its memory, and more wakes than its Postgres pool serves only queue on the pool while their
 * leases and ack timers run. Held-back jobs stay in the stream for a worker that has room. Logs when
 * it starts and stops holding back, not on every refusal.
 */
export function pullGate(options: PullGateOptions): () => boolean {
  let holding = false;
  return () => {
    const rss = options.rssBytes();
    const waiters = options.dbWaiters();
    const full = rss > options.maxRssBytes || waiters > options.maxDbWaiters;
    if (full !== holding) {
      const state = { rss_mb: Math.round(rss / 2 ** 20), db_waiters: waiters };
      if (full) options.log.warn(state, "holding back new wakes: memory or Postgres connections are short");
      else options.log.info(state, "taking new wakes again");
      holding = full;
    }
    return !full;
  };
}
