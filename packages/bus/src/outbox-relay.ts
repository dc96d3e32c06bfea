import { metrics } from "@opentelemetry/api";
import { type BackoffOptions, backoffDelay, sleep, WakeloopError } from "@wakeloop/contracts";
import type { Database } from "@wakeloop/db";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Bus } from "./connect";
import { LagHistogram, type LagSnapshot } from "./lag-histogram";
import { createStreamPublisher, type StreamMessage, type StreamPublisher } from "./stream-publisher";

export const OUTBOX_CHANNEL = "wl_outbox";
// One relay publishes at a time (see run); the key is arbitrary but fixed for every process.
const RELAY_LOCK_KEY = 0x776c6f62;
// Consecutive rounds with rows before the relay lingers: a turn's own commits come a few in a row,
// while a burst from many sessions keeps every round busy.
const LINGER_AFTER_ROUNDS = 3;
// Millisecond bounds fine enough below 30 ms to show a linger's few milliseconds on a dashboard (the
// SDK's default buckets jump 0, 5, 10, 25).
const LAG_BUCKETS_MS = [
  1, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 75, 100, 150, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000,
];

export interface OutboxRelayOptions {
  db: Kysely<Database>;
  /** Postgres URL for the relay's own LISTEN connection (a pooled one cannot hold a LISTEN). */
  listenUrl: string;
  bus: Pick<Bus, "nc" | "subjects" | "inbox">;
  /**
   * Messages a round takes, at most: whole outbox rows (one commit's events each) while fewer than this
   * many messages come before them, so a round ends with its last commit whole and can go past this by
   * that commit's size.
   */
  messagesPerRound?: number;
  /** Fallback when a notification is lost or the LISTEN connection is down. */
  pollIntervalMs?: number;
  publishTimeoutMs?: number;
  /**
   * Under sustained load (the last few rounds all took rows) wait this long before the next
   * round, so rows committed meanwhile go out in one larger batch: fewer statements and publishes per
   * event for at most this much more lag. A lone event, or the few commits of one turn, never waits: it
   * goes out as fast as without a linger. 0: never wait.
   */
  lingerMs?: number;
  /** Delay after a failed round (NATS or Postgres down), growing with consecutive failures. */
  retry?: BackoffOptions;
  /** Failures the relay recovered from; for logs. */
  onError?: (err: WakeloopError) => void;
}

export interface OutboxRelayStats {
  /** Messages (events) whose outbox row was deleted after every one of its messages was acked. */
  published: number;
  /**
   * Messages the stream already held (a repeat after a lost ack, the acked part of a row published whole
   * again after a partial failure, or another relay's work): should stay rare.
   */
  duplicates: number;
  /** Rounds run as the leader: each one `wl_outbox_relay` statement, plus a publish when it took rows. */
  rounds: number;
  /**
   * Commit of the row → JetStream ack, once per message, for messages published since start (or the last
   * `lag.reset()`).
   */
  lag: LagSnapshot;
}

export interface OutboxRelay {
  start(): Promise<void>;
  /** Finishes the round in progress, then closes the LISTEN connection. */
  stop(): Promise<void>;
  stats(): OutboxRelayStats;
  readonly lag: LagHistogram;
}

/** One message of an outbox row: `wl_outbox_relay` returns a row's messages together, in order. */
interface OutboxMessage {
  /** The outbox row's id, shared by the messages of one commit. */
  id: number;
  tenant_id: string;
  msg_id: string;
  session_id: string;
  type: string;
  /** The event's JSON, as committed. */
  body: string;
  headers: unknown;
  /** Age when selected, by the database clock, so app/db clock skew does not enter the lag. */
  age_ms: number;
}

/** A row whose every message the stream acked, as it counts once the next round deleted it. */
interface AckedRow {
  id: number;
  messages: number;
  /** Of its messages, those the stream already held. */
  duplicates: number;
  lagMs: number;
}

function storedHeaders(value: unknown): Record<string, string> {
  const h: Record<string, string> = {};
  if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) if (typeof v === "string") h[key] = v;
  }
  return h;
}

/**
 * Moves committed outbox rows to JetStream (invariant 1: the bus only ever carries what Postgres holds).
 * A row holds one commit's messages; it is deleted only after every one of them was acked. A row with a
 * message unacked is published whole again, and whatever the stream already holds of it (the same
 * `Nats-Msg-Id`) is dropped as a duplicate.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const messagesPerRound = options.messagesPerRound ?? 256;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const retry = options.retry ?? { initialMs: 100, maxMs: 5_000 };
  const publishTimeoutMs = options.publishTimeoutMs ?? 5_000;
  const lingerMs = options.lingerMs ?? 10;
  const encoder = new TextEncoder();
  const lag = new LagHistogram();
  // Made here, not at import: the service's MeterProvider is registered by then (telemetry starts
  // before any app code), and a relay is made once per process.
  const meter = metrics.getMeter("@wakeloop/bus");
  const lagInstrument = meter.createHistogram("wakeloop.outbox.relay.lag", {
    unit: "ms",
    description: "Outbox message committed to acknowledged by JetStream, once per message",
    advice: { explicitBucketBoundaries: LAG_BUCKETS_MS },
  });
  // Rounds per relayed message show how well the linger gathers rows (each round is one statement).
  const roundsInstrument = meter.createCounter("wakeloop.outbox.relay.rounds", {
    description: "Outbox relay rounds run as the leader, each one statement and at most one publish batch",
  });
  const stopping = new AbortController();
  let published = 0;
  let duplicates = 0;
  let rounds = 0;
  let loop: Promise<void> | undefined;
  let publisher: StreamPublisher | undefined;
  let listener: pg.Client | undefined;
  let notified = false;
  let wake: (() => void) | undefined;

  const report = (code: string, message: string, cause: unknown) =>
    options.onError?.(new WakeloopError(code, message, { cause, retryable: true }));

  const notify = () => {
    notified = true;
    wake?.();
  };

  // Until a notification, the poll interval, or stop(): whichever comes first.
  const waitForWork = () =>
    new Promise<void>((resolve) => {
      if (notified || stopping.signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, pollIntervalMs);
      wake = done;
    });

  const listen = async (failures = 0): Promise<void> => {
    if (stopping.signal.aborted) return;
    const client = new pg.Client({
      connectionString: options.listenUrl,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    const reconnect = (err: unknown) => {
      if (listener !== client) return;
      listener = undefined;
      client.end().catch(() => undefined);
      if (stopping.signal.aborted) return;
      report("outbox_listen_lost", "LISTEN connection lost; polling until it is back", err);
      void sleep(backoffDelay(failures, retry), stopping.signal).then(() => listen(failures + 1));
    };
    listener = client;
    client.on("notification", notify);
    client.on("error", reconnect);
    client.on("end", () => reconnect(new Error("connection ended")));
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      failures = 0;
      // Rows committed while we were not listening sent their notification to nobody.
      notify();
    } catch (err) {
      reconnect(err);
    }
  };

  const toMessage = (row: OutboxMessage): StreamMessage => ({
    subject: options.bus.subjects.evt(row.tenant_id, row.session_id, row.type),
    data: encoder.encode(row.body),
    msgId: row.msg_id,
    headers: storedHeaders(row.headers),
  });

  // Whether this relay holds the relay lock on its connection (see run).
  let leading = false;
  // Rows the stream has acked every message of, deleted by the next round's statement.
  let acked: AckedRow[] = [];

  /**
   * One round on the relay's connection: one statement deletes the rows the previous round got acked
   * and takes the next rows' messages (about `limit`, see `messagesPerRound`) in id and then commit
   * order, whose publishes go out pipelined on one connection (so the stream stores them in that order).
   * No transaction: the relay lock, not a row lock, keeps a second relay from taking the same rows, and
   * a row whose deletion did not happen is published again and dropped by the stream as a duplicate.
   */
  const relayRound = async (
    conn: Kysely<Database>,
    publisher: StreamPublisher,
    limit: number,
  ): Promise<{ count: number; failure?: unknown }> => {
    if (!leading) {
      const lock = await sql<{
        locked: boolean;
      }>`SELECT pg_try_advisory_lock(${RELAY_LOCK_KEY}) AS locked`.execute(conn);
      leading = lock.rows[0]?.locked === true;
      if (!leading) return { count: 0 };
    }
    const deleted = acked;
    // The relay serves every tenant, so it reads and deletes through the definer function made for it
    // (migrations 0032, 0036) rather than reading the outbox as any one tenant.
    const { rows: messages } = await sql<OutboxMessage>`SELECT * FROM wl_outbox_relay(${deleted.map(
      (row) => row.id,
    )}::bigint[], ${limit})`.execute(conn);
    rounds += 1;
    roundsInstrument.add(1);
    acked = [];
    // Only rows whose deletion committed count as relayed.
    for (const row of deleted) {
      published += row.messages;
      duplicates += row.duplicates;
      for (let n = 0; n < row.messages; n++) {
        lag.record(row.lagMs);
        lagInstrument.record(row.lagMs);
      }
    }
    if (messages.length === 0) return { count: 0 };
    const selectedAt = performance.now();
    const acks = await publisher.publishAll(messages.map(toMessage), publishTimeoutMs);
    const ackedAt = performance.now();
    let failure: unknown;
    // In id order (a Map keeps insertion order); a row with any message unacked stays queued whole.
    const ackedRows = new Map<number, AckedRow>();
    const unackedRows = new Set<number>();
    acks.forEach((ack, index) => {
      const message = messages[index];
      if (!message) return;
      if (!ack.ok) {
        failure ??= ack.error;
        unackedRows.add(message.id);
        return;
      }
      const row = ackedRows.get(message.id) ?? {
        id: message.id,
        messages: 0,
        duplicates: 0,
        lagMs: message.age_ms + (ackedAt - selectedAt),
      };
      row.messages += 1;
      if (ack.duplicate) row.duplicates += 1;
      ackedRows.set(message.id, row);
    });
    for (const row of ackedRows.values()) if (!unackedRows.has(row.id)) acked.push(row);
    return { count: messages.length, failure };
  };

  /**
   * Rounds on one pooled connection held for as long as it works. A session-level advisory lock on it
   * lets one relay publish at a time: with SKIP LOCKED alone, two relays could take consecutive
   * batches and store a session's later event before its earlier one. A standby tries for the lock
   * each round and takes over once the holder stops or its connection ends (which ends the lock).
   */
  const run = async (publisher: StreamPublisher) => {
    let failures = 0;
    const failed = async (cause: unknown) => {
      report("outbox_relay_failed", "relaying outbox rows failed; they stay queued", cause);
      await sleep(backoffDelay(failures++, retry), stopping.signal);
    };
    while (!stopping.signal.aborted) {
      try {
        await options.db.connection().execute(async (conn) => {
          try {
            // Rounds in a row that took rows: a few of them mean rows keep coming.
            let busy = 0;
            // Once stopped, one more round without a batch deletes what the last one got acked, so the
            // next relay does not publish it again.
            while (!stopping.signal.aborted || (leading && acked.length > 0)) {
              notified = false;
              const outcome = await relayRound(
                conn,
                publisher,
                stopping.signal.aborted ? 0 : messagesPerRound,
              );
              if (outcome.failure !== undefined) {
                await failed(outcome.failure);
                continue;
              }
              failures = 0;
              // After a batch the next round follows at once, deleting the batch's rows, unless rows keep
              // coming: then it lingers so more gather, and deletes them that much later. A full round
              // means more rows are waiting already.
              busy = outcome.count === 0 ? 0 : busy + 1;
              if (outcome.count === 0) await waitForWork();
              else if (lingerMs > 0 && busy >= LINGER_AFTER_ROUNDS && outcome.count < messagesPerRound)
                await sleep(lingerMs, stopping.signal);
            }
          } finally {
            // The pool hands this connection to other work next: it must not carry the lock there.
            if (leading) {
              leading = false;
              await sql`SELECT pg_advisory_unlock(${RELAY_LOCK_KEY})`.execute(conn);
            }
          }
        });
      } catch (err) {
        // Postgres failed the connection (and with it any lock it held): start over on another.
        await failed(err);
      }
    }
  };

  return {
    lag,
    async start() {
      if (loop) return;
      publisher = createStreamPublisher(options.bus.nc, options.bus.inbox());
      loop = run(publisher);
      await listen();
    },
    async stop() {
      stopping.abort();
      wake?.();
      await loop;
      publisher?.close();
      const client = listener;
      listener = undefined;
      await client?.end().catch(() => undefined);
    },
    stats: () => ({ published, duplicates, rounds, lag: lag.snapshot() }),
  };
}
