import { SessionEvent, WakeJob } from "@wakeloop/contracts";
import type { z } from "zod";
import { DeadLetter } from "./dead-letter";
import type { Subjects } from "./subjects";

/** How a stream keeps what it stores. Only JetStream features nats-server 2.9 has. */
export interface StreamSpec {
  name: string;
  subjects: string[];
  /** `limits`: kept until max age; `workqueue`: removed once acked (each message goes to one consumer). */
  retention: "limits" | "workqueue";
  /** Window in which a repeated `Nats-Msg-Id` is dropped as a duplicate. */
  duplicateWindowMs: number;
  /** 0 keeps messages until deleted. */
  maxAgeMs: number;
  /** Copies of the stream in a JetStream cluster (1 on a single server); a publish is acked by a quorum. */
  replicas: number;
}

/** A durable pull consumer shared by every process that consumes the entry. */
export interface ConsumerSpec {
  durable: string;
  filterSubject: string;
  /** Redelivery happens this long after the last delivery, ack or `working()` heartbeat. */
  ackWaitMs: number;
  /** Deliveries before the server gives up; the last one is dead-lettered by `consume` when it fails. */
  maxDeliver: number;
  /** `all` replays what the stream holds; `new` starts at the moment the consumer is created. */
  deliverPolicy: "all" | "new";
}

/** A message kind: its schema bound to the subject it travels on and the stream that stores it. */
export interface CatalogEntry<Schema extends z.ZodType = z.ZodType, Args extends string[] = string[]> {
  kind: string;
  schema: Schema;
  subject(...args: Args): string;
  stream: StreamSpec;
  consumer?: ConsumerSpec;
}

export type PayloadOf<E extends CatalogEntry> = z.input<E["schema"]>;
export type ParsedOf<E extends CatalogEntry> = z.output<E["schema"]>;
export type SubjectArgsOf<E extends CatalogEntry> = Parameters<E["subject"]>;

export interface CatalogOptions {
  /** Sized to the p99 of one wake step; workers call `working()` during longer steps. */
  wakeAckWaitMs?: number;
  /** A wake job delivered this often without success is dead-lettered. */
  wakeMaxDeliver?: number;
  /**
   * Must cover the longest outage during which a publish may have been stored without its ack reaching
   * the publisher: the retry after it is then still recognised as a duplicate.
   */
  duplicateWindowMs?: number;
  /** NATS is not the source of truth (Postgres is); old events only serve late readers. */
  eventsMaxAgeMs?: number;
  deadLettersMaxAgeMs?: number;
  /** Replicas of every stream: 3 on a three-node cluster, so losing any one node loses nothing. */
  replicas?: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
export const WAKE_CONSUMER = "harness-workers";

export function createCatalog(subjects: Subjects, options: CatalogOptions = {}) {
  const duplicateWindowMs = options.duplicateWindowMs ?? 5 * MINUTE;
  if (duplicateWindowMs < 2 * MINUTE) throw new RangeError("duplicateWindowMs must be at least 2 minutes");
  const replicas = options.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5)
    throw new RangeError("replicas must be 1 to 5");
  const events: CatalogEntry<typeof SessionEvent, [tenant: string, session: string, type: string]> = {
    kind: "events",
    schema: SessionEvent,
    subject: (tenant, session, type) => subjects.evt(tenant, session, type),
    stream: {
      name: subjects.stream("events"),
      subjects: [`${subjects.prefix}.evt.>`],
      retention: "limits",
      duplicateWindowMs,
      maxAgeMs: options.eventsMaxAgeMs ?? 7 * DAY,
      replicas,
    },
  };
  const wakes: CatalogEntry<typeof WakeJob, [tenant: string, session: string]> = {
    kind: "wakes",
    schema: WakeJob,
    subject: (tenant, session) => subjects.wake(tenant, session),
    stream: {
      name: subjects.stream("wakes"),
      subjects: [`${subjects.prefix}.wake.>`],
      retention: "workqueue",
      duplicateWindowMs,
      maxAgeMs: 0,
      replicas,
    },
    consumer: {
      durable: WAKE_CONSUMER,
      filterSubject: `${subjects.prefix}.wake.>`,
      ackWaitMs: options.wakeAckWaitMs ?? 30_000,
      maxDeliver: options.wakeMaxDeliver ?? 5,
      deliverPolicy: "all",
    },
  };
  const deadLetters: CatalogEntry<typeof DeadLetter, [kind: string]> = {
    kind: "dead_letters",
    schema: DeadLetter,
    subject: (kind) => subjects.deadLetter(kind),
    stream: {
      name: subjects.stream("dlq"),
      subjects: [`${subjects.prefix}.dlq.>`],
      retention: "limits",
      duplicateWindowMs,
      maxAgeMs: options.deadLettersMaxAgeMs ?? 30 * DAY,
      replicas,
    },
  };
  return { events, wakes, deadLetters };
}

export type Catalog = ReturnType<typeof createCatalog>;

/**
 * The same messages read through another durable consumer, e.g. the orchestrator's view of the events
 * stream. `ensureConsumer` creates it.
 */
export function withConsumer<E extends CatalogEntry>(entry: E, consumer: ConsumerSpec): E {
  return { ...entry, consumer };
}

/**
 * Durable consumers of the events stream, one per event-type filter (nats-server 2.9 allows one filter
 * per consumer), for a service that acts on a few event families only: the others never reach it.
 * Each starts with what the stream holds, waits 30 s for an ack and delivers 10 times at most.
 */
export function eventTypeConsumers(
  events: Catalog["events"],
  subjects: Subjects,
  watched: readonly { durable: string; type: string }[],
): Catalog["events"][] {
  return watched.map(({ durable, type }) =>
    withConsumer(events, {
      durable,
      filterSubject: subjects.evtFilter(type),
      ackWaitMs: 30_000,
      maxDeliver: 10,
      deliverPolicy: "all",
    }),
  );
}
