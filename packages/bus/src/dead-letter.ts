import type { JsMsg } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import { BusError, Timestamp } from "@wakeloop/contracts";
import { z } from "zod";

export const DeadLetterReason = z.enum([
  /** The message did not parse against its catalog schema; retrying cannot help. */
  "invalid_message",
  /** The handler threw a non-retryable WakeloopError. */
  "handler_rejected",
  /** The handler kept failing until the consumer's last delivery. */
  "retries_exhausted",
]);
export type DeadLetterReason = z.infer<typeof DeadLetterReason>;

/** What is kept of a message that could not be handled: enough to inspect it and to publish it again. */
export const DeadLetter = z.object({
  reason: DeadLetterReason,
  error: BusError,
  subject: z.string(),
  stream: z.string(),
  stream_seq: z.number().int().positive(),
  delivery_count: z.number().int().positive(),
  /** The original payload as UTF-8 text (it may be the very thing that failed to parse). */
  data: z.string(),
  headers: z.record(z.string(), z.array(z.string())),
  dead_lettered_at: Timestamp,
});
export type DeadLetter = z.infer<typeof DeadLetter>;

export function headersRecord(headers: MsgHdrs | undefined): Record<string, string[]> {
  const record: Record<string, string[]> = {};
  if (headers) for (const [key, values] of headers) record[key] = values;
  return record;
}

export function deadLetterOf(msg: JsMsg, reason: DeadLetterReason, error: BusError, now: Date): DeadLetter {
  return {
    reason,
    error,
    subject: msg.subject,
    stream: msg.info.stream,
    stream_seq: msg.seq,
    delivery_count: msg.info.deliveryCount,
    data: new TextDecoder().decode(msg.data),
    headers: headersRecord(msg.headers),
    dead_lettered_at: now.toISOString(),
  };
}

/** One dead letter per stored message, however often its last delivery is retried. */
export function deadLetterMsgId(msg: JsMsg): string {
  return `dlq:${msg.info.stream}:${msg.seq}`;
}
