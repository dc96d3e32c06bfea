import { type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";

/** One message for a stream; `msgId` becomes `Nats-Msg-Id`, so the stream drops a repeat. */
export interface StreamMessage {
  subject: string;
  data: Uint8Array;
  msgId: string;
  headers: Record<string, string>;
}

export type StreamAck = { ok: true; duplicate: boolean } | { ok: false; error: Error };

export interface StreamPublisher {
  /**
   * Publishes every message in order on the connection, then waits for each one's ack from the stream
   * until `timeoutMs`; the result at each index says what became of that message.
   */
  publishAll(messages: readonly StreamMessage[], timeoutMs: number): Promise<StreamAck[]>;
  close(): void;
}

interface PubAckBody {
  stream?: string;
  duplicate?: boolean;
  error?: { description?: string; err_code?: number };
}

function readAck(data: Uint8Array, code: number | undefined): StreamAck {
  // An empty reply with status 503: no stream listens on the subject.
  if (code === 503) return { ok: false, error: new Error("no stream stores this subject") };
  let body: PubAckBody;
  try {
    body = JSON.parse(new TextDecoder().decode(data)) as PubAckBody;
  } catch (err) {
    return { ok: false, error: new Error("unreadable stream ack", { cause: err }) };
  }
  if (body.error !== undefined)
    return { ok: false, error: new Error(body.error.description ?? `stream error ${body.error.err_code}`) };
  if (typeof body.stream !== "string" || body.stream === "")
    return { ok: false, error: new Error("invalid stream ack") };
  return { ok: true, duplicate: body.duplicate === true };
}

/**
 * JetStream publishes pipelined on one connection, their acks taken on one reply subscription. nats.js's
 * `js.publish` is a request per message: its own timer, promise and reply routing, and an Error with a
 * stack built for every request even when it succeeds (its `RequestOne.cancel`); relaying each event that
 * way was about a tenth of the orchestrator's CPU. Here a round of messages shares one timer, and each ack
 * is matched to its message by the token ending its reply subject. `inbox` must be one of the
 * connection's own inboxes (its user may subscribe only there).
 */
export function createStreamPublisher(nc: NatsConnection, inbox: string): StreamPublisher {
  const waiting = new Map<string, (ack: StreamAck) => void>();
  let nextToken = 0;
  const subscription = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) {
        // The subscription is gone (closed, or refused by the server): nothing waiting will be answered.
        for (const settle of waiting.values()) settle({ ok: false, error: err });
        return;
      }
      const token = msg.subject.slice(inbox.length + 1);
      waiting.get(token)?.(readAck(msg.data, msg.headers?.code));
    },
  });

  const publishAll = (messages: readonly StreamMessage[], timeoutMs: number) =>
    new Promise<StreamAck[]>((resolve) => {
      const acks: (StreamAck | undefined)[] = messages.map(() => undefined);
      const tokens: string[] = [];
      let left = messages.length;
      const finish = () => {
        clearTimeout(timer);
        for (const token of tokens) waiting.delete(token);
        resolve(acks.map((ack) => ack ?? { ok: false, error: new Error("no ack within the timeout") }));
      };
      const settle = (index: number, ack: StreamAck) => {
        if (acks[index] !== undefined) return;
        acks[index] = ack;
        left -= 1;
        if (left === 0) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      if (left === 0) return finish();
      messages.forEach((message, index) => {
        const token = String(nextToken++);
        tokens.push(token);
        waiting.set(token, (ack) => settle(index, ack));
        const h = natsHeaders();
        for (const [key, value] of Object.entries(message.headers)) h.set(key, value);
        h.set("Nats-Msg-Id", message.msgId);
        try {
          nc.publish(message.subject, message.data, { reply: `${inbox}.${token}`, headers: h });
        } catch (err) {
          settle(index, { ok: false, error: err instanceof Error ? err : new Error(String(err)) });
        }
      });
    });

  return { publishAll, close: () => subscription.unsubscribe() };
}
