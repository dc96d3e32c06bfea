import { type Bus, type ConsumeHandler, ensureConsumer, ensureStream, withConsumer } from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import { type Database, indexSessionEvents } from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";

/** The durable consumer every replica shares: each committed event is indexed by one of them. */
export const EVENT_INDEX_CONSUMER = "memory-retrieval-index";

export function eventIndexConsumer(bus: Bus) {
  return withConsumer(bus.catalog.events, {
    durable: EVENT_INDEX_CONSUMER,
    filterSubject: `${bus.subjects.prefix}.evt.>`,
    ackWaitMs: 30_000,
    maxDeliver: 10,
    // A new consumer indexes what the stream still holds (its max age), not only what commits after it.
    deliverPolicy: "all",
  });
}

/**
 * Keeps the session event search index (migration 0017) up to date from the committed-events stream:
 * each event with text is inserted once by event id, so a redelivery or a second replica adds nothing.
 * A failed insert (Postgres away) is redelivered by the consumer.
 */
export async function startEventIndexer(deps: {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  concurrency: number;
}): Promise<{ stop(): Promise<void> }> {
  const { db, bus, log } = deps;
  // Only the stream it reads: the other streams and their consumers are not this service's to touch.
  await ensureStream(bus.jsm, bus.catalog.events.stream);
  const consumer = eventIndexConsumer(bus);
  await ensureConsumer(bus.jsm, consumer);
  const handle: ConsumeHandler<SessionEvent> = async ({ data: event, subject }) => {
    // The stream holds only subjects its catalog entry built, so a null here is not a session event.
    const tenantId = bus.subjects.parseEvt(subject)?.tenant;
    if (tenantId !== undefined) await indexSessionEvents(db, tenantId, [event]);
  };
  const stopping = new AbortController();
  const loop = bus.consume(consumer, handle, {
    concurrency: deps.concurrency,
    signal: stopping.signal,
    onError: (err) => log.warn({ err }, "event index consumer recovered from an error"),
  });
  log.info({ consumer: EVENT_INDEX_CONSUMER }, "event indexer started");
  return {
    stop: async () => {
      stopping.abort();
      await loop;
    },
  };
}
