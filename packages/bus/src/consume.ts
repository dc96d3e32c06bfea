import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import { type BusError, WakeloopError } from "@wakeloop/contracts";
import { backoffDelay, sleep } from "./backoff";
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
  const parsed = entry.schema.safeParse(value);
  if (parsed.success) return { ok: true, data: parsed.data };
  return {
    ok: false,
    error: invalidMessage(`message does not match the ${entry.kind} schema`, parsed.error.issues),
  };
}

/**
 * Pulls `entry` through its durable consumer until `signal` aborts. Resolves once stopped; rejects only
 * when the consumer does not exist (a deployment error that retrying cannot fix).
 */
export async function consume<E extends CatalogEntry>(
  deps: ConsumeDeps,
  entry: E,
  handler: ConsumeHandler<ParsedOf<E>>,
  options: ConsumeOptions = {},
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

  const handle = async (msg: JsMsg): Promise<void> => {
    const parsed = parseMessage(msg, entry);
    if (!parsed.ok) return deadLetter(msg, "invalid_message", parsed.error);
    try {
      await context.with(extractTraceContext(msg.headers), () =>
        handler({
          // Parsed by this entry's own schema; zod's result type is not carried through the generic.
          data: parsed.data as ParsedOf<E>,
          subject: msg.subject,
          headers: msg.headers,
          deliveryCount: msg.info.deliveryCount,
          msg,
          working: () => settle("extend", () => msg.working()),
        }),
      );
      settle("ack", () => msg.ack());
    } catch (err) {
      const error = asWakeloopError(err);
      if (!error.retryable) return deadLetter(msg, "handler_rejected", error.toBusError());
      if (msg.info.deliveryCount >= spec.maxDeliver)
        return deadLetter(msg, "retries_exhausted", error.toBusError());
      settle("nak", () => msg.nak(retryDelayMs(msg.info.deliveryCount)));
    }
  };

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
          const task: Promise<void> = handle(msg).finally(() => {
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
