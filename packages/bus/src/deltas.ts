import type { NatsConnection } from "@nats-io/transport-node";
import { StreamDelta, WakeloopError } from "@wakeloop/contracts";
import { encodeJson, invalidPayload } from "./publish";
import type { Subjects } from "./subjects";

// Live deltas are core NATS, fire and forget, on `<p>.delta.<tenant>.<session>`: a preview of what the
// model is writing, never stored (the stored events of the request are the answer), so a lost one
// costs nothing. The publisher never waits: a slow or absent subscriber cannot hold back a wake.

export function publishDelta(
  nc: NatsConnection,
  subjects: Subjects,
  tenant: string,
  delta: StreamDelta,
): void {
  const parsed = StreamDelta.safeParse(delta);
  if (!parsed.success) throw invalidPayload("stream delta", parsed.error);
  nc.publish(subjects.delta(tenant, parsed.data.session_id), encodeJson(parsed.data));
}

export interface DeltaSubscription {
  unsubscribe(): void;
}

export interface SubscribeDeltasOptions {
  /** An invalid message or one for another session is dropped; this only reports it. */
  onError?: (err: WakeloopError) => void;
}

export function subscribeDeltas(
  nc: NatsConnection,
  subjects: Subjects,
  tenant: string,
  session: string,
  handler: (delta: StreamDelta) => void,
  options: SubscribeDeltasOptions = {},
): DeltaSubscription {
  const sub = nc.subscribe(subjects.delta(tenant, session), {
    callback: (_err, msg) => {
      let delta: StreamDelta;
      try {
        delta = StreamDelta.parse(JSON.parse(msg.string()));
      } catch (err) {
        options.onError?.(
          new WakeloopError("bus_invalid_message", `invalid stream delta on ${msg.subject}`, { cause: err }),
        );
        return;
      }
      if (delta.session_id !== session) {
        options.onError?.(
          new WakeloopError("bus_invalid_message", `a delta of another session on ${msg.subject}`),
        );
        return;
      }
      handler(delta);
    },
  });
  return { unsubscribe: () => sub.unsubscribe() };
}
