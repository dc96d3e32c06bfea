import {
  type Bus,
  type ConsumeBatchHandler,
  ensureConsumer,
  ensureStream,
  eventTypeConsumers,
  removeConsumer,
} from "@wakeloop/bus";
import type { SessionEvent } from "@wakeloop/contracts";
import { type Database, indexCommittedEvents, type TenantEvent } from "@wakeloop/db";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";

/**
 * The durable consumers every replica shares, each committed event being indexed by one of them. Only
 * user and agent events carry text (`indexableText`); the span and session events that make up about
 * half of the stream never reach the indexer.
 */
const INDEXED = [
  { durable: "memory-retrieval-index-user", type: "user.>" },
  { durable: "memory-retrieval-index-agent", type: "agent.>" },
] as const;

/** The consumer of every event that the indexer read before it was split by family. */
const RETIRED_CONSUMER = "memory-retrieval-index";

/** Events indexed in one statement at most. */
const MAX_BATCH = 256;

export function eventIndexConsumers(bus: Bus) {
  // A new consumer indexes what the stream still holds (its max age), not only what commits after it.
  return eventTypeConsumers(bus.catalog.events, bus.subjects, INDEXED);
}

/**
 * Keeps the session event search index (migration 0017) up to date from the committed-events stream.
 * The events of one consumer delivered within `batchIntervalMs` of each other (up to `MAX_BATCH`) are
 * inserted in one statement, each once by event id, so a redelivery or a second replica adds nothing;
 * each is acked once its batch committed. A failed batch (Postgres away) fails every delivery in it,
 * and each is redelivered by the consumer.
 */
export async function startEventIndexer(deps: {
  db: Kysely<Database>;
  bus: Bus;
  log: Logger;
  concurrency: number;
  batchIntervalMs: number;
}): Promise<{ stop(): Promise<void> }> {
  const { db, bus, log } = deps;
  // Only the stream it reads: the other streams and their consumers are not this service's to touch.
  await ensureStream(bus.jsm, bus.catalog.events.stream);
  const consumers = eventIndexConsumers(bus);
  for (const consumer of consumers) await ensureConsumer(bus.jsm, consumer);
  if (await removeConsumer(bus.jsm, bus.catalog.events.stream.name, RETIRED_CONSUMER))
    log.info({ consumer: RETIRED_CONSUMER }, "retired event index consumer deleted");
  const handle: ConsumeBatchHandler<SessionEvent> = async (batch) => {
    const events: TenantEvent[] = [];
    for (const { data: event, subject } of batch) {
      // The stream holds only subjects its catalog entry built, so a null here is not a session event.
      const tenantId = bus.subjects.parseEvt(subject)?.tenant;
      if (tenantId !== undefined) events.push({ tenantId, event });
    }
    await indexCommittedEvents(db, events);
  };
  const stopping = new AbortController();
  const loops = consumers.map((consumer) =>
    bus.consumeBatches(consumer, handle, {
      concurrency: deps.concurrency,
      maxBatch: MAX_BATCH,
      batchIntervalMs: deps.batchIntervalMs,
      signal: stopping.signal,
      onError: (err) =>
        log.warn(
          { err, consumer: consumer.consumer?.durable },
          "event index consumer recovered from an error",
        ),
    }),
  );
  log.info({ consumers: INDEXED.map(({ durable }) => durable) }, "event indexer started");
  return {
    stop: async () => {
      stopping.abort();
      await Promise.all(loops);
    },
  };
}
