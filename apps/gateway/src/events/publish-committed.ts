import { type Bus, publishWakeJob, type WakeJobToPublish } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import type { FastifyBaseLogger } from "fastify";

/**
 * Sends just-committed user events to JetStream at once, ahead of the outbox relay, so the orchestrator
 * can open the wake without waiting for the relay's next round (about 3 ms of dispatch latency). The
 * relay still publishes every outbox row and the stream drops the repeat by msg id (the event id), so
 * this is best effort: a failure only leaves the event to the relay.
 */
export function publishCommitted(
  bus: Bus,
  tenantId: string,
  events: readonly SessionEvent[],
  log: FastifyBaseLogger,
): void {
  for (const event of events) {
    bus
      .publish(bus.catalog.events, [tenantId, event.session_id, event.type], event, { msgId: event.id })
      .catch((error: unknown) =>
        log.warn({ err: error, event_id: event.id }, "early publish failed; the relay will"),
      );
  }
}

/**
 * Publishes the wake jobs a commit marked published (see `postUserEvents`). Not waited for: the wake is
 * durable already, and a lost publish is repeated by the orchestrator's sweeper with the same msg id.
 */
export function publishWakeJobs(bus: Bus, jobs: readonly WakeJobToPublish[], log: FastifyBaseLogger): void {
  for (const job of jobs) {
    publishWakeJob(bus, job).catch((error: unknown) =>
      log.warn({ err: error, wake_id: job.id }, "wake job publish failed; the sweeper will repeat it"),
    );
  }
}
