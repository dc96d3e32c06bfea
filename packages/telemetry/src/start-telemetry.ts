import {
  type Attributes,
  context,
  type Meter,
  metrics,
  propagation,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { hostDetector, processDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { type IMetricReader, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Database } from "@wakeloop/db";
import type { Kysely } from "kysely";
import { type ListenAddress, type MetricsServer, startMetricsServer } from "./metrics-server";
import { PostgresSpanExporter } from "./postgres-span-exporter";
import { scrubbingExporter } from "./scrubbing-exporter";
import { createSecretScrubber } from "./secret-scrubber";
import { SessionAttributionProcessor } from "./session-attribution";

export interface StartTelemetryOptions {
  serviceName: string;
  /**
   * OTLP/HTTP base URL (`/v1/traces` and `/v1/metrics` are appended), e.g. a collector on :4318.
   */
  otlpEndpoint?: string;
  /** Push metrics to `otlpEndpoint` too (default true); off for a backend that takes only traces (Jaeger). */
  otlpMetrics?: boolean;
  /** Where spans are persisted; every service passes its database so traces need no backend. */
  db?: Kysely<Database>;
  resourceAttributes?: Attributes;
  /** Values that must never be exported (the process's configured keys and passwords). */
  secrets?: readonly string[];
}

export interface Telemetry {
  tracer: Tracer;
  /** Create instruments from it once, at start-up; the same meter serves every scrape and OTLP push. */
  meter: Meter;
  /** Serves `GET /metrics` (Prometheus text format) on `port` until shutdown; 0 picks a free port. */
  serveMetrics(address: ListenAddress): Promise<MetricsServer>;
  /** Exports every span ended so far (e.g. before reading a trace back from Postgres) and pushes metrics. */
  flush(): Promise<void>;
  /** Exports every span still buffered, then unregisters the SDK. Call before closing `db`. */
  shutdown(): Promise<void>;
}

/** Postgres is local and cheap to write; a short delay keeps a just-finished wake readable soon after. */
const POSTGRES_EXPORT_DELAY_MS = 1_000;
/** How often metrics are pushed over OTLP; Prometheus scrapes on its own schedule. */
const OTLP_METRICS_INTERVAL_MS = 15_000;

/**
 * Starts the OpenTelemetry Node SDK for this process and registers it globally, so spans created
 * anywhere with `@opentelemetry/api` are exported. It is also the one place a MeterProvider is made:
 * metrics are scraped from `serveMetrics` and pushed over OTLP when an endpoint is set. Auto-instrumentation stays off: we create the
 * spans that matter explicitly, and loading instrumentations slows every start-up.
 */
export function startTelemetry(options: StartTelemetryOptions): Telemetry {
  const scrub = createSecretScrubber(options.secrets);
  // First, so the exporters below see the ids it gives child spans.
  const spanProcessors: SpanProcessor[] = [new SessionAttributionProcessor()];
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
  // Collects only when scraped, so it costs nothing between scrapes; `serveMetrics` exposes it.
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  const metricReaders: IMetricReader[] = [prometheus];
  if (options.otlpEndpoint !== undefined && options.otlpMetrics !== false) {
    const url = `${options.otlpEndpoint.replace(/\/+$/, "")}/v1/metrics`;
    metricReaders.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url }),
        exportIntervalMillis: OTLP_METRICS_INTERVAL_MS,
      }),
    );
  }
  const servers: MetricsServer[] = [];

  const sdk = new NodeSDK({
    resource: resourceFromAttributes({
      ...options.resourceAttributes,
      [ATTR_SERVICE_NAME]: options.serviceName,
    }),
    // Host and process facts only: the environment detector would read OTEL_* variables, and
    // configuration reaches packages through options (STYLE: config is parsed once).
    resourceDetectors: [hostDetector, processDetector],
    spanProcessors,
    // The SDK's one MeterProvider, with the same resource as the spans.
    metricReaders,
    // We emit no OTel logs (logs are pino JSON); an empty list keeps the SDK from creating a default
    // exporter for them.
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
    meter: metrics.getMeter(options.serviceName),
    async serveMetrics(address) {
      const server = await startMetricsServer(prometheus, address);
      servers.push(server);
      return server;
    },
    async flush() {
      await Promise.all([
        ...spanProcessors.map((processor) => processor.forceFlush()),
        ...metricReaders.map((reader) => reader.forceFlush()),
      ]);
    },
    async shutdown() {
      await Promise.all(servers.map((server) => server.close()));
      await sdk.shutdown();
      // The SDK leaves its globals registered; clearing them lets a process (a test) start again.
      trace.disable();
      metrics.disable();
      context.disable();
      propagation.disable();
    },
  };
}
