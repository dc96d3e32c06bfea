import { type Bus, type ConsumeHandler, eventTypeConsumers } from "@wakeloop/bus";
import type { EventType, SessionEvent } from "@wakeloop/contracts";
import { type Database, getSession, needsSettling, settleIdleInterrupt } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";
import { releaseSandbox } from "./sandbox-release";
import { followSubSessions } from "./sub-session-follower";
import { dispatchWakes } from "./wake-dispatch";
import { scheduleIfNeeded } from "./wake-scheduler";

/**
 * Events after which a session may need a wake (DESIGN §3 steps 2, 6; a person's outcome; a raised
 * budget; work left at idle).
 */
const WAKE_TRIGGERS = new Set<EventType>([
  "user.message",
  "user.define_outcome",
  "user.tool_confirmation",
  "user.custom_tool_result",
  "session.updated",
  "session.status_idle",
]);

/** Events that close a wake (committed with its `finish`), or end the session under it. */
const WAKE_ENDS = new Set<EventType>(["session.status_idle", "session.status_terminated"]);

/**
 * The orchestrator reads only the events it acts on: one durable consumer per subject filter, since
 * nats-server 2.9 allows one filter per consumer. The agent, span and tool events that make up most of
 * the stream never reach it.
 */
const WATCHED = [
  { durable: "orchestrator-user", type: "user.>" },
  { durable: "orchestrator-idle", type: "session.status_idle" },
  { durable: "orchestrator-updated", type: "session.updated" },
  { durable: "orchestrator-terminated", type: "session.status_terminated" },
] as const;

export function eventsConsumers(bus: Bus) {
  return eventTypeConsumers(bus.catalog.events, bus.subjects, WATCHED);
}

/**
 * Follows the committed events of every session that can change what it needs, through durable
 * consumers shared by all orchestrator replicas. Each decision re-reads the session from Postgres, so a late, repeated or
 * reordered delivery can only lead to the same decision.
 */
export function watchSessions(deps: {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  sandbox: SandboxClient | null;
  concurrency: number;
  /** Each tenant's limit of wakes in flight (`WAKES_IN_FLIGHT_PER_TENANT`). */
  maxWakesInFlight: number;
  signal: AbortSignal;
}): Promise<void> {
  const { db, bus, log } = deps;
  const handle: ConsumeHandler<SessionEvent> = async ({ data: event, subject, deliveryCount }) => {
    // The stream holds only subjects its catalog entry built, so a null here is not a session event.
    const tenantId = bus.subjects.parseEvt(subject)?.tenant;
    if (tenantId === undefined) return;
    const target = { tenantId, sessionId: event.session_id };
    // The end of a turn is read once, for every decision below; each that acts re-reads under its lock.
    const ended = WAKE_ENDS.has(event.type) ? await getSession(db, tenantId, event.session_id) : undefined;
    const told = await followSubSessions(deps, event, {
      ...target,
      // Unknown (not read, or not found): every sub-session step looks for itself.
      isChild: ended?.parent_session_id !== null,
    });
    if (told !== null) {
      // The child's unspent budget came back to its parent, which may have stopped on it.
      const resumed = await scheduleIfNeeded(db, bus, { tenantId, sessionId: told }, deps.maxWakesInFlight);
      if (resumed) log.info({ session_id: told, wake_id: resumed.id, reason: resumed.reason }, "wake queued");
    }
    if (
      event.type === "user.interrupt" ||
      (event.type === "session.status_idle" && ended != null && needsSettling(ended.state))
    ) {
      if (await settleIdleInterrupt(db, target)) {
        log.info({ session_id: event.session_id }, "interrupt applied to idle session");
        return;
      }
      if (event.type === "user.interrupt") return;
    }
    // A wake that ended leaves its tenant room for a held one.
    if (WAKE_ENDS.has(event.type)) await dispatchWakes(db, bus, tenantId, deps.maxWakesInFlight);
    if (event.type === "session.status_terminated") {
      await releaseSandbox({ db, sandbox: deps.sandbox, log }, target, deliveryCount);
      return;
    }
    if (!WAKE_TRIGGERS.has(event.type)) return;
    const wake = await scheduleIfNeeded(db, bus, target, deps.maxWakesInFlight, ended);
    if (wake) log.info({ session_id: wake.session_id, wake_id: wake.id, reason: wake.reason }, "wake queued");
  };
  return Promise.all(
    eventsConsumers(bus).map((consumer) =>
      bus.consume(consumer, handle, {
        concurrency: deps.concurrency,
        signal: deps.signal,
        onError: (err) =>
          log.warn({ err, consumer: consumer.consumer?.durable }, "events consumer recovered from an error"),
      }),
    ),
  ).then(() => undefined);
}
