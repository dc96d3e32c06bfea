import type { Attributes, AttributeValue } from "@opentelemetry/api";
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { Scrub } from "./secret-scrubber";

/**
 * Hands every exporter (Postgres and OTLP alike) spans whose status message, attributes and event
 * attributes have been scrubbed of secrets: an exception recorded from a provider's error can carry
 * whatever that provider echoed back. The view inherits from the original span, so methods such as
 * `spanContext()` keep working.
 */
export function scrubbingExporter(inner: SpanExporter, scrub: Scrub): SpanExporter {
  return {
    export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
      inner.export(
        spans.map((span) => scrubbedSpan(span, scrub)),
        resultCallback,
      );
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
}

function scrubbedSpan(span: ReadableSpan, scrub: Scrub): ReadableSpan {
  const status =
    span.status.message === undefined ? span.status : { ...span.status, message: scrub(span.status.message) };
  return Object.create(span, {
    status: { value: status },
    attributes: { value: scrubAttributes(span.attributes, scrub) },
    events: {
      value: span.events.map((event) =>
        event.attributes === undefined
          ? event
          : { ...event, attributes: scrubAttributes(event.attributes, scrub) },
      ),
    },
  }) as ReadableSpan;
}

function scrubAttributes(attributes: Attributes, scrub: Scrub): Attributes {
  const scrubbed: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) scrubbed[name] = scrubValue(value, scrub);
  return scrubbed;
}

function scrubValue(value: AttributeValue | undefined, scrub: Scrub): AttributeValue | undefined {
  if (typeof value === "string") return scrub(value);
  if (Array.isArray(value)) {
    return value.map((item) => (typeof item === "string" ? scrub(item) : item)) as AttributeValue;
  }
  return value;
}
