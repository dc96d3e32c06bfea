import { type Context, trace } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_WAKELOOP_SESSION_ID,
  ATTR_WAKELOOP_TENANT_ID,
  ATTR_WAKELOOP_WAKE_ID,
} from "./attributes";

/**
 * Gives a span the tenant, session and wake ids of its parent in this process when it has none of its
 * own: a wake's root span names them once, and its `chat` and `execute_tool` spans (and whatever runs
 * under them) then land in Postgres with the session they belong to, which is how the API and
 * `session_search_traces` find them. Spans from other processes carry their own ids.
 */
export class SessionAttributionProcessor implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    const parent = trace.getSpan(parentContext) as Partial<ReadableSpan> | undefined;
    const inherited = parent?.attributes;
    if (inherited === undefined) return;
    const session = inherited[ATTR_GEN_AI_CONVERSATION_ID] ?? inherited[ATTR_WAKELOOP_SESSION_ID];
    const ids = {
      [ATTR_WAKELOOP_SESSION_ID]: session,
      [ATTR_WAKELOOP_TENANT_ID]: inherited[ATTR_WAKELOOP_TENANT_ID],
      [ATTR_WAKELOOP_WAKE_ID]: inherited[ATTR_WAKELOOP_WAKE_ID],
    };
    for (const [name, value] of Object.entries(ids)) {
      if (value !== undefined && span.attributes[name] === undefined) span.setAttribute(name, value);
    }
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
