import type { Bus } from "@wakeloop/bus";
import type { Logger } from "@wakeloop/telemetry";
import { runWake, type WakeDeps } from "./wake/run-wake";

// Jobs one pull may take: a pull stays open until it has them, so this bounds how many wakes start
// between two looks at memory and Postgres waiters, while a backlog still drains in few pulls.
const MAX_PULL_BATCH = 32;

export interface WorkerLimits {
  /** Wakes run at once. */
  slots: number;
  /** Asked before each pull: false takes no new wake for now (see pull-gate.ts). */
  mayPull: () => boolean;
}

/**
 * Pulls wake jobs from the shared durable consumer, `slots` at a time and only while `mayPull`. A
 * job is acked when its wake ends, whatever the outcome; a wake that could not be taken (already running or finished) is a
 * duplicate delivery and is acked too. Crashes are recovered by the orchestrator's lease sweeper.
 * `stop` pulls no more jobs and waits for the wakes in hand to end.
 */
export function startWorker(deps: WakeDeps & { bus: Bus; log: Logger; limits: WorkerLimits }): {
  stop(): Promise<void>;
  isReady(): boolean;
} {
  const stopping = new AbortController();
  const done = deps.bus
    .consume(
      deps.bus.catalog.wakes,
      async ({ data: job, working }) => {
        await runWake(deps, job, working);
      },
      {
        concurrency: deps.limits.slots,
        mayPull: deps.limits.mayPull,
        maxPullBatch: MAX_PULL_BATCH,
        signal: stopping.signal,
        onError: (err) => deps.log.warn({ err }, "wake consumer recovered from an error"),
      },
    )
    .catch((err: unknown) => deps.log.error({ err }, "wake consumer stopped"));
  return {
    isReady: () => !stopping.signal.aborted,
    async stop() {
      stopping.abort();
      await done;
    },
  };
}
