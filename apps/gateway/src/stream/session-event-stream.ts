import type { Bus } from "@wakeloop/bus";
import { SessionEvent, type StreamDelta } from "@wakeloop/contracts";
import { type Database, readEvents } from "@wakeloop/db";
import type { Kysely } from "kysely";

export interface SessionEventStreamInput {
  db: Kysely<Database>;
  bus: Bus;
  tenantId: string;
  sessionId: string;
  /** The last seq the client has; the stream starts after it. */
  afterSeq: number;
  keepAliveMs: number;
  /** Also forward the model's live deltas (never stored; see @wakeloop/contracts deltas.ts). */
  deltas: boolean;
  /** Called once the live subscription is in place; events and keep-alives go to what it returns. */
  open(): Promise<EventSink>;
  /** Client gone or server closing: the stream ends. */
  signal: AbortSignal;
}

export interface EventSink {
  send(event: SessionEvent): Promise<void>;
  /** Sends at once or drops (a client that is behind); never waits. */
  sendDelta(delta: StreamDelta): void;
  keepAlive(): Promise<void>;
}

const BACKFILL_PAGE = 500;
/** Ended requests remembered so their late deltas are dropped; a wake's requests end in order. */
const ENDED_REQUESTS_KEPT = 32;
/** How long to wait for the server to confirm the subscription; see runSessionEventStream. */
const SUBSCRIBE_CONFIRM_MS = 2_000;

/**
 * Streams a session's events in seq order, each exactly once, from `afterSeq` on, until `signal`.
 *
 * Nothing may fall between history and live: the live subscription is made (and confirmed by the
 * server) BEFORE history is read from Postgres, so an event committed in between is in one or both;
 * live events at or below the last sent seq are skipped. A live event beyond the next seq means some
 * were missed (a slow-consumer drop, a NATS reconnect, a relay still catching up), and Postgres, which
 * holds every committed event, fills the gap. Each keep-alive also checks Postgres, so the stream
 * stays complete with NATS down. The live side is a core subscription on the events stream's
 * subjects: no consumer state on the server per client, and Postgres covers whatever it misses. For
 * the same reason the subscription's confirmation is awaited only briefly: with NATS away it would
 * never come, and an event it would have carried is still found by the next catch-up.
 *
 * Live deltas, when asked for, go straight to the sink as they arrive, outside the seq order: they are
 * a preview of a request still running. Those of a request whose `span.model_request_end` was already
 * sent (a delta can arrive after the stored answer, from another connection) are dropped, so a client
 * never sees the preview after the answer.
 */
export async function runSessionEventStream(input: SessionEventStreamInput): Promise<void> {
  const { bus, signal } = input;
  const subject = bus.subjects.sessionEvents(input.tenantId, input.sessionId);
  const subscription = bus.nc.subscribe(subject);
  const stop = () => subscription.unsubscribe();
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();

  let lastSent = input.afterSeq;
  let failure: unknown;
  const exclusive = serialized();
  let deltaSink: EventSink | undefined;
  const ended = new Set<string>();
  const deltas = input.deltas
    ? bus.subscribeDeltas(input.tenantId, input.sessionId, (delta) => {
        if (deltaSink !== undefined && !signal.aborted && !ended.has(delta.model_request_start_id))
          deltaSink.sendDelta(delta);
      })
    : null;

  const forward = async (sink: EventSink, event: SessionEvent) => {
    if (event.seq <= lastSent || signal.aborted) return;
    if (event.type === "span.model_request_end") {
      ended.add(event.model_request_start_id);
      if (ended.size > ENDED_REQUESTS_KEPT) ended.delete(ended.values().next().value as string);
    }
    await sink.send(event);
    lastSent = event.seq;
  };
  const catchUp = async (sink: EventSink) => {
    for (;;) {
      const events = await readEvents(input.db, {
        tenantId: input.tenantId,
        sessionId: input.sessionId,
        afterSeq: lastSent,
        limit: BACKFILL_PAGE,
      });
      for (const event of events) await forward(sink, event);
      if (events.length < BACKFILL_PAGE || signal.aborted) return;
    }
  };
  const keepAlive = (sink: EventSink) => {
    exclusive(async () => {
      await sink.keepAlive();
      await catchUp(sink);
    }).catch((error: unknown) => {
      failure ??= error;
      stop();
    });
  };

  let timer: NodeJS.Timeout | undefined;
  try {
    await settledWithin(bus.nc.flush(), SUBSCRIBE_CONFIRM_MS);
    if (signal.aborted) return;
    const sink = await input.open();
    deltaSink = sink;
    timer = setInterval(() => keepAlive(sink), input.keepAliveMs);
    await exclusive(() => catchUp(sink));
    for await (const msg of subscription) {
      const event = liveEvent(msg.string(), input.sessionId);
      await exclusive(async () => {
        if (event === null || event.seq > lastSent + 1) await catchUp(sink);
        else await forward(sink, event);
      });
    }
  } finally {
    clearInterval(timer);
    signal.removeEventListener("abort", stop);
    subscription.unsubscribe();
    deltas?.unsubscribe();
  }
  if (failure !== undefined && !signal.aborted) throw failure;
}

/** A committed event from the bus; null when the message is not one (it then only triggers a catch-up). */
function liveEvent(text: string, sessionId: string): SessionEvent | null {
  try {
    const parsed = SessionEvent.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.session_id === sessionId ? parsed.data : null;
  } catch {
    return null;
  }
}

async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise.catch(() => undefined), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs tasks one at a time in call order, so history, live events and keep-alives never interleave. */
function serialized() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };
}
