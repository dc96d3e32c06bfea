import type { MsgHdrs } from "@nats-io/transport-node";
import {
  type Context,
  context,
  propagation,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";

// NATS headers as an OpenTelemetry carrier, so whichever propagator the process registered (W3C trace
// context in our services) writes `traceparent`/`tracestate` into every message and reads them back.
const setter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

const getter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => carrier?.keys() ?? [],
  get: (carrier, key) => (carrier?.has(key) ? carrier.get(key) : undefined),
};

export function injectTraceContext(headers: MsgHdrs, from: Context = context.active()): void {
  propagation.inject(from, headers, setter);
}

/** The context a message was sent from, layered over the current one (empty when it carried none). */
export function extractTraceContext(headers: MsgHdrs | undefined): Context {
  return propagation.extract(context.active(), headers, getter);
}
