import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamInfo,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { backoffDelay, sleep, WakeloopError } from "@wakeloop/contracts";
import type { Catalog, CatalogEntry, ConsumerSpec, StreamSpec } from "./catalog";

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

function streamConfig(spec: StreamSpec) {
  return {
    name: spec.name,
    retention: spec.retention === "workqueue" ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    storage: StorageType.File,
    mutable: {
      subjects: spec.subjects,
      discard: DiscardPolicy.Old,
      duplicate_window: nanos(spec.duplicateWindowMs),
      max_age: nanos(spec.maxAgeMs),
      // Mutable on a cluster (2.9 scales a stream's replicas in place); a single server takes only 1.
      num_replicas: spec.replicas,
    },
  };
}

/** Tries of one set-up while its errors say a retry can help (a cluster electing a leader, a slow quorum). */
const SETUP_TRIES = 5;
const SETUP_BACKOFF = { initialMs: 500, maxMs: 4_000 };

async function retrying(setUp: () => Promise<void>): Promise<void> {
  for (let failures = 0; ; failures++) {
    try {
      return await setUp();
    } catch (error) {
      if (!(error instanceof WakeloopError && error.retryable) || failures + 1 >= SETUP_TRIES) throw error;
      await sleep(backoffDelay(failures, SETUP_BACKOFF));
    }
  }
}

/**
 * Creates the stream or brings an existing one to `spec`; safe to run from every process at start-up.
 * A timeout or a lost connection is tried again a few times before it fails the start.
 */
export function ensureStream(jsm: JetStreamManager, spec: StreamSpec): Promise<void> {
  return retrying(() => setUpStream(jsm, spec));
}

async function setUpStream(jsm: JetStreamManager, spec: StreamSpec): Promise<void> {
  const { name, retention, storage, mutable } = streamConfig(spec);
  let info: StreamInfo;
  try {
    try {
      info = await jsm.streams.update(name, mutable);
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
      info = await jsm.streams.add({ name, retention, storage, ...mutable });
    }
  } catch (err) {
    // The server's reason says what to change (e.g. "replicas > 1 not supported in non-clustered mode").
    const reason = err instanceof JetStreamApiError ? `: ${err.message}` : "";
    throw new WakeloopError("bus_stream_setup_failed", `could not create or update stream ${name}${reason}`, {
      cause: err,
      retryable: !(err instanceof JetStreamApiError),
    });
  }
  // Retention and storage cannot change in place; a stream left by an older layout must be migrated by hand.
  if (info.config.retention !== retention || info.config.storage !== storage) {
    throw new WakeloopError(
      "bus_stream_config_conflict",
      `stream ${name} exists with retention ${info.config.retention}/${info.config.storage}, expected ${retention}/${storage}`,
    );
  }
}

export function ensureConsumer(jsm: JetStreamManager, entry: CatalogEntry): Promise<void> {
  return retrying(() => setUpConsumer(jsm, entry));
}

async function setUpConsumer(jsm: JetStreamManager, entry: CatalogEntry): Promise<void> {
  const spec: ConsumerSpec | undefined = entry.consumer;
  if (!spec) return;
  const config = {
    durable_name: spec.durable,
    filter_subject: spec.filterSubject,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver,
  };
  const stream = entry.stream.name;
  try {
    try {
      await jsm.consumers.info(stream, spec.durable);
      await jsm.consumers.update(stream, spec.durable, config);
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
      await jsm.consumers.add(stream, {
        ...config,
        deliver_policy: spec.deliverPolicy === "new" ? DeliverPolicy.New : DeliverPolicy.All,
      });
    }
  } catch (err) {
    throw new WakeloopError(
      "bus_consumer_setup_failed",
      `could not set up consumer ${spec.durable} on ${stream}`,
      {
        cause: err,
        retryable: !(err instanceof JetStreamApiError),
      },
    );
  }
}

/**
 * Deletes a durable consumer a previous layout used (one that no code pulls from any more), so the
 * server stops keeping its state. Returns false when it is already gone.
 */
export async function removeConsumer(
  jsm: JetStreamManager,
  stream: string,
  durable: string,
): Promise<boolean> {
  try {
    return await jsm.consumers.delete(stream, durable);
  } catch (err) {
    if (isApiError(err, JetStreamApiCodes.ConsumerNotFound)) return false;
    throw new WakeloopError(
      "bus_consumer_setup_failed",
      `could not remove consumer ${durable} on ${stream}`,
      {
        cause: err,
        retryable: !(err instanceof JetStreamApiError),
      },
    );
  }
}

export async function ensureStreams(jsm: JetStreamManager, catalog: Catalog): Promise<void> {
  for (const entry of Object.values(catalog) as CatalogEntry[]) {
    await ensureStream(jsm, entry.stream);
    await ensureConsumer(jsm, entry);
  }
}
