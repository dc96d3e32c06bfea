export type { Attributes, Counter, Histogram, Meter, Tracer } from "@opentelemetry/api";
export * from "./attributes";
export { boundedAttributes, OTHER_LABEL_VALUE } from "./bounded-attributes";
export {
  type CreateLoggerOptions,
  createLogger,
  type Logger,
  type LogLevel,
  type WakeLogIds,
  withWakeIds,
} from "./logger";
export * from "./metric-names";
export { type ListenAddress, type ListeningServer, listen, type MetricsServer } from "./metrics-server";
export { readTrace, type TraceQuery, type TraceSpan, type TraceSpanEvent } from "./read-trace";
export { type StartTelemetryOptions, startTelemetry, type Telemetry } from "./start-telemetry";
