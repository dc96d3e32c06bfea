import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import { type MsgHdrs, headers as natsHeaders } from "@nats-io/transport-node";
import { WakeloopError } from "@wakeloop/contracts";
import type { z } from "zod";
import type { CatalogEntry, PayloadOf, SubjectArgsOf } from "./catalog";
import { injectTraceContext } from "./trace-context";

export interface PublishOptions {
  /** Becomes `Nats-Msg-Id`: the stream drops a repeat within its duplicate window. Use the domain id. */
  msgId: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

export function messageHeaders(extra: Record<string, string> = {}): MsgHdrs {
  const h = natsHeaders();
  for (const [key, value] of Object.entries(extra)) h.set(key, value);
  injectTraceContext(h);
  return h;
}

export function invalidPayload(what: string, error: z.ZodError): WakeloopError {
  return new WakeloopError("bus_invalid_payload", `${what} does not match its schema`, {
    details: { issues: error.issues },
  });
}

export async function publish<E extends CatalogEntry>(
  js: JetStreamClient,
  entry: E,
  subjectArgs: SubjectArgsOf<E>,
  payload: PayloadOf<E>,
  options: PublishOptions,
): Promise<PubAck> {
  const parsed = entry.schema.safeParse(payload);
  if (!parsed.success) throw invalidPayload(`${entry.kind} message`, parsed.error);
  const subject = entry.subject(...subjectArgs);
  try {
    return await js.publish(subject, encodeJson(parsed.data), {
      msgID: options.msgId,
      headers: messageHeaders(options.headers),
      timeout: options.timeoutMs,
    });
  } catch (err) {
    throw new WakeloopError("bus_publish_failed", `publishing to ${subject} failed`, {
      cause: err,
      retryable: true,
    });
  }
}
