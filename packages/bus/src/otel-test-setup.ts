import { randomBytes } from "node:crypto";
import { context, propagation, ROOT_CONTEXT, type SpanContext, TraceFlags, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/** What a service's telemetry set-up registers, minus exporting: W3C propagation and async context. */
export function installTestPropagation(): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** A context whose active span is a fresh, sampled span context (as if a span had been started). */
export function fakeSpanContext(): { ctx: ReturnType<typeof trace.setSpanContext>; span: SpanContext } {
  const span: SpanContext = {
    traceId: randomBytes(16).toString("hex"),
    spanId: randomBytes(8).toString("hex"),
    traceFlags: TraceFlags.SAMPLED,
  };
  return { ctx: trace.setSpanContext(ROOT_CONTEXT, span), span };
}

export function activeTraceId(): string | undefined {
  return trace.getSpanContext(context.active())?.traceId;
}
