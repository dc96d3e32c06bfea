import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import {
  type BusError,
  backoffDelay,
  exceedsJsonDepth,
  jsonDepthMessage,
  sleep,
  WakeloopError,
} from "@wakeloop/contracts";
import type { Catalog, CatalogEntry, ConsumerSpec, ParsedOf } from "./catalog";
import { type DeadLetterReason, deadLetterMsgId, deadLetterOf } from "./dead-letter";
import { asWakeloopError } from "./errors";
import { publish } from "./publish";
import { extractTraceContext } from "./trace-context";

export interface ConsumeContext<T> {
  data: T;
  subject: string;
  headers: MsgHdrs | undefined;
  /** 1 on the first delivery. */
  deliveryCount: number;
  msg: JsMsg;
  /** Resets the ack timer: call it during work that can outlast the consumer's ack wait. */
  working(): void;
}

/**
 * Resolving acks the message. Throwing a retryable error (or any non-WakeloopError) redelivers it after a
 * backoff, until the consumer's last delivery; throwing a non-retryable WakeloopError dead-letters it.
 */
export type ConsumeHandler<T> = (ctx: ConsumeContext<T>) => Promise<void>;

export interface ConsumeOptions {
  /** Messages handled at once by this process; no more than this many are pulled. */
  concurrency?: number;
  /** Aborting stops pulling, lets in-flight handlers finish, then resolves `consume`. */
  signal?: AbortSignal;
  /** Redelivery delay after a retryable failure, by delivery count (1-based). */
  retryDelayMs?: (deliveryCount: number) => number;
  /** How long one pull request waits on the server; an abort ends it early. */
  pullExpiresMs?: number;
  /** Failures the loop recovered from (a failed pull, an ack that could not be sent); for logs. */
  onError?: (err: WakeloopError) => void;
  /**
   * Asked before each pull, even with free slots: false holds pulling back (the process is short of
   * memory or connections) until a handler finishes or `holdMs` passes, then it is asked again. Messages
   * stay in the stream meanwhile, for a process that has room.
   */
  mayPull?: () => boolean;
  /** How long a refused `mayPull` waits before it is asked again when no handler finishes sooner. */
  holdMs?: number;
  /**
   * Most messages one pull asks for (default: every free slot). A pull stays open until it has them
   * or expires, so this bounds how many are taken between two answers of `mayPull`.
   */
  maxPullBatch?: number;
}

export interface ConsumeDeps {
  js: JetStreamClient;
  deadLetters: Catalog["deadLetters"];
}

const defaultRetryDelay = (deliveryCount: number) =>
  backoffDelay(deliveryCount - 1, { initialMs: 1_000, maxMs: 60_000 });

function invalidMessage(message: string, issues: unknown[]): BusError {
  return { code: "bus_invalid_message", message, retryable: false, details: { issues } };
}

/** The message as its catalog schema reads it, or why it cannot be read (retrying will not change that). */
function parseMessage(
  msg: JsMsg,
  entry: CatalogEntry,
): { ok: true; data: unknown } | { ok: false; error: BusError } {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(msg.data));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, error: invalidMessage("message is not JSON", [{ code: "invalid_json", message }]) };
  }
  // Refused before the schema (or any handler) walks it: past the limit, walking can run out of stack.
  if (exceedsJsonDepth(value)) {
    const message = jsonDepthMessage("the message");
    return { ok: false, error: invalidMessage(message, [{ code: "too_deep", message }]) };
  }
  const parsed = entry.schema.safeParse(value);
  if (parsed.success) return { ok: true, data: parsed.data };
  return {
    ok: false,
    error: invalidMessage(`message does not match the ${entry.kind} schema`, parsed.error.issues),
  };
}

/**
 * Gets the messages of one batch, failing or acking them together like a `ConsumeHandler` does one. No
 * trace context is entered for a batch: each message's headers carry its own.
 */
export type ConsumeBatchHandler<T> = (batch: ConsumeContext<T>[]) => Promise<void>;

export interface ConsumeBatchOptions extends ConsumeOptions {
  /**
   * Messages held at once by this process: those being collected and those whose batch is being
   * handled (default `maxBatch`).
   */
  concurrency?: number;
  /** Most messages one handler call gets (default 64). */
  maxBatch?: number;
  /**
   * How long a batch waits for more messages once its first one arrived (default 10; 0: until the next
   * timer tick).
   */
  batchIntervalMs?: number;
}

/**
 * Pulls `entry` through its durable consumer until `signal` aborts. Resolves once stopped; rejects only
 * when the consumer does not exist (a deployment error that retrying cannot fix).
 */
export function consume<E extends CatalogEntry>(
  deps: ConsumeDeps,
  entry: E,
  handler: ConsumeHandler<ParsedOf<E>>,
  options: ConsumeOptions = {},
): Promise<void> {
  return pullMessages(deps, entry, options, ({ open, ack, fail }) => async (msg) => {
    const ctx = await open(msg);
    if (!ctx) return;
    try {
      await context.with(extractTraceContext(msg.headers), () => handler(ctx));
      ack(msg);
    } catch (err) {
      await fail(msg, err);
    }
  });
}

/**
 * `consume` for handlers that do their work for many messages at once (one insert for many events):
 * the valid messages that arrive within `batchIntervalMs` of the first, up to `maxBatch`, go to one
 * handler call. Resolving acks every message of the batch; throwing fails each as if a `consume`
 * handler had thrown for it. An invalid message is dead-lettered and never joins a batch.
 */
export function consumeBatches<E extends CatalogEntry>(
  deps: ConsumeDeps,
  entry: E,
  handler: ConsumeBatchHandler<ParsedOf<E>>,
  options: ConsumeBatchOptions = {},
): Promise<void> {
  const maxBatch = options.maxBatch ?? 64;
  const concurrency = options.concurrency ?? maxBatch;
  return pullMessages(deps, entry, { ...options, concurrency }, ({ open, ack, fail }) => {
    const handleBatch = async (batch: ConsumeContext<ParsedOf<E>>[]) => {
      try {
        await handler(batch);
        for (const { msg } of batch) ack(msg);
      } catch (err) {
        await Promise.all(batch.map(({ msg }) => fail(msg, err)));
      }
    };
    const collect = collector(maxBatch, options.batchIntervalMs ?? 10, handleBatch);
    return async (msg) => {
      const ctx = await open(msg);
      if (ctx) await collect(ctx);
    };
  });
}

/**
 * Groups items into batches of at most `max`, each closed `intervalMs` after its first item; the
 * promise an item gets settles once `run` finished with its batch.
 */
function collector<T>(
  max: number,
  intervalMs: number,
  run: (batch: T[]) => Promise<void>,
): (item: T) => Promise<void> {
  let filling: { items: T[]; close(): void; done: Promise<void> } | undefined;
  return (item) => {
    if (!filling) {
      const items: T[] = [];
      let closed = () => {};
      const done = new Promise<void>((resolve) => {
        closed = resolve;
      }).then(() => run(items));
      const timer = setTimeout(() => batch.close(), intervalMs);
      const batch = {
        items,
        done,
        close: () => {
          clearTimeout(timer);
          if (filling === batch) filling = undefined;
          closed();
        },
      };
      filling = batch;
    }
    const batch = filling;
    batch.items.push(item);
    if (batch.items.length >= max) batch.close();
    return batch.done;
  };
}

/** What `consume` and `consumeBatches` do with each message, whoever calls the handler. */
interface Deliveries<T> {
  /** The message's context, or undefined once an unreadable message went to the dead letters. */
  open(msg: JsMsg): Promise<ConsumeContext<T> | undefined>;
  ack(msg: JsMsg): void;
  /** Redelivers after a backoff while retrying can help and deliveries remain, else dead-letters. */
  fail(msg: JsMsg, err: unknown): Promise<void>;
}

/**
 * The pull loop both consumers share: it pulls no more than `concurrency` messages to hold at once and
 * gives each to the function `start` makes, whose promise settles once the message was settled.
 */
async function pullMessages<E extends CatalogEntry>(
  deps: ConsumeDeps,
  entry: E,
  options: ConsumeOptions,
  start: (deliveries: Deliveries<ParsedOf<E>>) => (msg: JsMsg) => Promise<void>,
): Promise<void> {
  const spec: ConsumerSpec | undefined = entry.consumer;
  if (!spec) {
    throw new WakeloopError("bus_no_consumer", `catalog entry ${entry.kind} has no consumer to pull from`);
  }
  const concurrency = options.concurrency ?? 1;
  const { signal } = options;
  const retryDelayMs = options.retryDelayMs ?? defaultRetryDelay;
  const report = (code: string, message: string, cause: unknown) =>
    options.onError?.(new WakeloopError(code, message, { cause, retryable: true }));

  let consumer: Consumer;
  try {
    consumer = await deps.js.consumers.get(entry.stream.name, spec.durable);
  } catch (err) {
    throw new WakeloopError(
      "bus_consumer_missing",
      `consumer ${spec.durable} on ${entry.stream.name} not found`,
      {
        cause: err,
      },
    );
  }

  const settle = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      // The connection is gone: the server redelivers after ack wait, which is the safe outcome.
      report("bus_ack_failed", `could not ${what} message`, err);
    }
  };

  const deadLetter = async (msg: JsMsg, reason: DeadLetterReason, error: BusError) => {
    try {
      await publish(deps.js, deps.deadLetters, [entry.kind], deadLetterOf(msg, reason, error, new Date()), {
        msgId: deadLetterMsgId(msg),
      });
      settle("term", () => msg.term());
    } catch (err) {
      // Never drop a message whose dead letter was not stored: try again later.
      report("bus_dead_letter_failed", `could not dead-letter ${msg.subject}`, err);
      settle("nak", () => msg.nak(retryDelayMs(msg.info.deliveryCount)));
    }
  };

  const dispatch = start({
    open: async (msg) => {
      const parsed = parseMessage(msg, entry);
      if (!parsed.ok) {
        await deadLetter(msg, "invalid_message", parsed.error);
        return undefined;
      }
      return {
        // Parsed by this entry's own schema; zod's result type is not carried through the generic.
        data: parsed.data as ParsedOf<E>,
        subject: msg.subject,
        headers: msg.headers,
        deliveryCount: msg.info.deliveryCount,
        msg,
        working: () => settle("extend", () => msg.working()),
      };
    },
    ack: (msg) => settle("ack", () => msg.ack()),
    fail: async (msg, err) => {
      const error = asWakeloopError(err);
      if (!error.retryable) return deadLetter(msg, "handler_rejected", error.toBusError());
      if (msg.info.deliveryCount >= spec.maxDeliver)
        return deadLetter(msg, "retries_exhausted", error.toBusError());
      settle("nak", () => msg.nak(retryDelayMs(msg.info.deliveryCount)));
    },
  });

  const inflight = new Set<Promise<void>>();
  // The loop's one wait for room: a handler finishing, `ms` passing or the abort ends it. Racing the
  // in-flight promises instead would leave a reaction on each of them per wait, piling up with
  // hundreds in flight until each settles.
  let roomMade: (() => void) | undefined;
  const waitForRoom = (ms?: number) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        roomMade = undefined;
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      roomMade = done;
      signal?.addEventListener("abort", done, { once: true });
    });
  let batch: ConsumerMessages | undefined;
  const stopPulling = () => void batch?.close();
  signal?.addEventListener("abort", stopPulling, { once: true });
  let failures = 0;
  try {
    while (!signal?.aborted) {
      if (inflight.size >= concurrency) {
        await waitForRoom();
        continue;
      }
      if (options.mayPull?.() === false) {
        await waitForRoom(options.holdMs ?? 100);
        continue;
      }
      try {
        // Pull only what free slots can take, so no message waits in a local buffer while its ack
        // timer runs (a buffered wake job would be redelivered to another worker meanwhile).
        batch = await consumer.fetch({
          max_messages: Math.min(concurrency - inflight.size, options.maxPullBatch ?? concurrency),
          expires: options.pullExpiresMs ?? 10_000,
        });
        if (signal?.aborted) stopPulling();
        for await (const msg of batch) {
          if (signal?.aborted) {
            settle("nak", () => msg.nak());
            continue;
          }
          const task: Promise<void> = dispatch(msg).finally(() => {
            inflight.delete(task);
            roomMade?.();
          });
          inflight.add(task);
        }
        failures = 0;
      } catch (err) {
        report("bus_pull_failed", `pulling from ${spec.durable} failed`, err);
        await sleep(backoffDelay(failures++, { initialMs: 100, maxMs: 5_000 }), signal);
      } finally {
        batch = undefined;
      }
    }
  } finally {
    signal?.removeEventListener("abort", stopPulling);
    await Promise.all(inflight);
  }
}
