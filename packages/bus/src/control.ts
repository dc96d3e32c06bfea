import type { MsgHdrs, NatsConnection } from "@nats-io/transport-node";
import { context } from "@opentelemetry/api";
import { ControlMessage, WakeloopError } from "@wakeloop/contracts";
import { asWakeloopError } from "./errors";
import { encodeJson, invalidPayload, messageHeaders } from "./publish";
import type { Subjects } from "./subjects";
import { extractTraceContext } from "./trace-context";

// Control messages are core NATS, fire and forget: the durable record of an interrupt is the event and
// the flag in Postgres; this only wakes the worker that holds the lease sooner.

export function publishControl(nc: NatsConnection, subjects: Subjects, message: ControlMessage): void {
  const parsed = ControlMessage.safeParse(message);
  if (!parsed.success) throw invalidPayload("control message", parsed.error);
  nc.publish(subjects.ctl(parsed.data.session_id), encodeJson(parsed.data), { headers: messageHeaders() });
}

export interface ControlSubscription {
  unsubscribe(): void;
}

export interface SubscribeControlOptions {
  /** An invalid message or a failed handler: nothing can be retried on core NATS, so it is only reported. */
  onError?: (err: WakeloopError) => void;
}

export function subscribeControl(
  nc: NatsConnection,
  subjects: Subjects,
  session: string,
  handler: (message: ControlMessage, headers: MsgHdrs | undefined) => void | Promise<void>,
  options: SubscribeControlOptions = {},
): ControlSubscription {
  const sub = nc.subscribe(subjects.ctl(session), {
    callback: (_err, msg) => {
      let message: ControlMessage;
      try {
        message = ControlMessage.parse(JSON.parse(msg.string()));
      } catch (err) {
        options.onError?.(
          new WakeloopError("bus_invalid_message", `invalid control message on ${msg.subject}`, {
            cause: err,
          }),
        );
        return;
      }
      context
        .with(extractTraceContext(msg.headers), async () => handler(message, msg.headers))
        .catch((err: unknown) => options.onError?.(asWakeloopError(err)));
    },
  });
  return { unsubscribe: () => sub.unsubscribe() };
}
