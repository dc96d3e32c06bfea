export type { Tracer } from "@opentelemetry/api";
export * from "./attributes";
export {
  type CreateLoggerOptions,
  createLogger,
  type Logger,
  type LogLevel,
  type WakeLogIds,
  withWakeIds,
} from "./logger";
export { readTrace, type TraceQuery, type TraceSpan, type TraceSpanEvent } from "./read-trace";
export { type StartTelemetryOptions, startTelemetry, type Telemetry } from "./start-telemetry";
