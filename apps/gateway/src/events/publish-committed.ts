import { type Bus, publishWakeJob, type WakeJobToPublish } from "@wakeloop/bus";
import type { FastifyBaseLogger } from "fastify";

/**
 * Publishes the wake jobs a commit marked published (see `postUserEvents`). Not waited for: the wake is
 * durable already, and a lost publish is repeated by the orchestrator's sweeper with the same msg id.
 *
 * The committed events themselves go to JetStream through the outbox relay only. The gateway used to
 * publish them too, ahead of the relay, so that the orchestrator would open their wake sooner; now the
 * gateway opens it and publishes its job here, the orchestrator finds it open, SSE readers are not
 * waiting on the poster's own events (the poster has them in the 202) and fill any gap from Postgres,
 * so that publish was a second copy of each event for the stream to drop.
 */
export function publishWakeJobs(bus: Bus, jobs: readonly WakeJobToPublish[], log: FastifyBaseLogger): void {
  for (const job of jobs) {
    publishWakeJob(bus, job).catch((error: unknown) =>
      log.warn({ err: error, wake_id: job.id }, "wake job publish failed; the sweeper will repeat it"),
    );
  }
}
