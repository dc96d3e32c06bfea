import type { Bus } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import type { FastifyBaseLogger } from "fastify";

/**
 * Tells the worker holding a session's lease, at once, about committed events that must stop its wake:
 * an interrupt, or the session's termination (archive). Both are durable already (events and the
 * projection, which the worker re-reads), so a lost message only delays the stop; it is logged.
 */
export function signalWorker(bus: Bus, events: readonly SessionEvent[], log: FastifyBaseLogger): void {
  for (const event of events) {
    if (event.type !== "user.interrupt" && event.type !== "session.status_terminated") continue;
    try {
      bus.publishControl({ type: "interrupt", session_id: event.session_id, event_id: event.id });
    } catch (error) {
      log.warn({ err: error, event_id: event.id }, "could not publish the interrupt control message");
    }
  }
}
