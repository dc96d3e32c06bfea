import { type Bus, WAKE_CONSUMER } from "@wakeloop/bus";
import { ATTR_WAKELOOP_LEASE_OUTCOME, type Logger, type Meter, MetricName } from "@wakeloop/telemetry";

const RESCHEDULED = { [ATTR_WAKELOOP_LEASE_OUTCOME]: "rescheduled" } as const;
const EXHAUSTED = { [ATTR_WAKELOOP_LEASE_OUTCOME]: "exhausted" } as const;

export interface LeaseMetrics {
  /** Expired leases one sweep acted on: wakes re-queued, and wakes given up with retries_exhausted. */
  expired(requeued: number, exhausted: number): void;
}

export function createLeaseMetrics(meter: Meter): LeaseMetrics {
  const expiries = meter.createCounter(MetricName.leaseExpiries, {
    description: "Expired wake leases the sweeper acted on, by outcome",
  });
  return {
    expired(requeued, exhausted) {
      if (requeued > 0) expiries.add(requeued, RESCHEDULED);
      if (exhausted > 0) expiries.add(exhausted, EXHAUSTED);
    },
  };
}

/**
 * The wake queue as JetStream holds it, read when metrics are collected (a scrape or an OTLP push):
 * jobs not yet delivered to a worker, jobs a worker holds, and how long the oldest undelivered one
 * has waited. Wakes a tenant's in-flight limit holds back in Postgres are not published yet and not
 * counted. Every orchestrator replica reports the same queue: aggregate with max, not sum.
 */
export function observeWakeQueue(meter: Meter, bus: Bus, log: Logger): void {
  const depth = meter.createObservableGauge(MetricName.wakeQueueDepth, {
    description: "Wake jobs published and not yet delivered to a worker",
  });
  const inProgress = meter.createObservableGauge(MetricName.wakeQueueInProgress, {
    description: "Wake jobs delivered to a worker and not yet acknowledged",
  });
  const age = meter.createObservableGauge(MetricName.wakeQueueAge, {
    unit: "s",
    description: "How long the oldest undelivered wake job has waited; 0 when none waits",
  });
  const { stream } = bus.catalog.wakes;
  meter.addBatchObservableCallback(
    async (result) => {
      try {
        const info = await bus.jsm.consumers.info(stream.name, WAKE_CONSUMER);
        result.observe(depth, info.num_pending);
        result.observe(inProgress, info.num_ack_pending);
        // A work-queue stream with one consumer delivers in sequence order, so the oldest undelivered
        // job is the one right after the last delivered.
        const oldest =
          info.num_pending === 0
            ? null
            : await bus.jsm.streams.getMessage(stream.name, { seq: info.delivered.stream_seq + 1 });
        result.observe(age, oldest === null ? 0 : Math.max(0, (Date.now() - oldest.time.getTime()) / 1_000));
      } catch (err) {
        // A scrape while NATS is away reports nothing rather than a wrong zero.
        log.debug({ err }, "wake queue not observed");
      }
    },
    [depth, inProgress, age],
  );
}
