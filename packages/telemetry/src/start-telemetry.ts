import { type Attributes, context, propagation, type Tracer, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { hostDetector, processDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Database } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { PostgresSpanExporter } from "./postgres-span-exporter";
import { scrubbingExporter } from "./scrubbing-exporter";
import { createSecretScrubber } from "./secret-scrubber";

export interface StartTelemetryOptions {
  serviceName: string;
  /** OTLP/HTTP base URL (the `/v1/traces` path is appended), e.g. a collector or Jaeger on :4318. */
  otlpEndpoint?: string;
  /** Where spans are persisted; every service passes its database so traces need no backend. */
  db?: Kysely<Database>;
  resourceAttributes?: Attributes;
  /** Values that must never be exported (the process's configured keys and passwords). */
  secrets?: readonly string[];
}

export interface Telemetry {
  tracer: Tracer;
  /** Exports every span ended so far, e.g. before reading a trace back from Postgres. */
  flush(): Promise<void>;
  /** Exports every span still buffered, then unregisters the SDK. Call before closing `db`. */
  shutdown(): Promise<void>;
}

/** Postgres is local and cheap to write; a short delay keeps a just-finished wake readable soon after. */
const POSTGRES_EXPORT_DELAY_MS = 1_000;

/**
 * Starts the OpenTelemetry Node SDK for this process and registers it globally, so spans created
 * anywhere with `@opentelemetry/api` are exported. Auto-instrumentation stays off: we create the
 * spans that matter explicitly, and loading instrumentations slows every start-up.
 */
export function startTelemetry(options: StartTelemetryOptions): Telemetry {
  const scrub = createSecretScrubber(options.secrets);
  const spanProcessors: SpanProcessor[] = [];
  if (options.db !== undefined) {
    spanProcessors.push(
      new BatchSpanProcessor(scrubbingExporter(new PostgresSpanExporter(options.db), scrub), {
        scheduledDelayMillis: POSTGRES_EXPORT_DELAY_MS,
      }),
    );
  }
  if (options.otlpEndpoint !== undefined) {
    const url = `${options.otlpEndpoint.replace(/\/+$/, "")}/v1/traces`;
    spanProcessors.push(new BatchSpanProcessor(scrubbingExporter(new OTLPTraceExporter({ url }), scrub)));
  }

  const sdk = new NodeSDK({
    resource: resourceFromAttributes({
      ...options.resourceAttributes,
      [ATTR_SERVICE_NAME]: options.serviceName,
    }),
    // Host and process facts only: the environment detector would read OTEL_* variables, and
    // configuration reaches packages through options (STYLE: config is parsed once).
    resourceDetectors: [hostDetector, processDetector],
    spanProcessors,
    // We emit no OTel logs or metrics (logs are pino JSON); empty lists keep the SDK from creating
    // default exporters for them.
    logRecordProcessors: [],
    contextManager: new AsyncLocalStorageContextManager(),
    textMapPropagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
    instrumentations: [],
  });
  sdk.start();

  return {
    tracer: trace.getTracer(options.serviceName),
    async flush() {
      await Promise.all(spanProcessors.map((processor) => processor.forceFlush()));
    },
    async shutdown() {
      await sdk.shutdown();
      // The SDK leaves its globals registered; clearing them lets a process (a test) start again.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
