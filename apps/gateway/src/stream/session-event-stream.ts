import type { Bus } from "@wakeloop/bus";
import { SessionEvent } from "@wakeloop/contracts";
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
  /** Called once the live subscription is in place; events and keep-alives go to what it returns. */
  open(): Promise<EventSink>;
  /** Client gone or server closing: the stream ends. */
  signal: AbortSignal;
}

export interface EventSink {
  send(event: SessionEvent): Promise<void>;
  keepAlive(): Promise<void>;
}

const BACKFILL_PAGE = 500;
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

  const forward = async (sink: EventSink, event: SessionEvent) => {
    if (event.seq <= lastSent || signal.aborted) return;
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
