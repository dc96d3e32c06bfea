import { isSpanContextValid, trace } from "@opentelemetry/api";
import { type DestinationStream, type Level, type Logger, pino } from "pino";
import { createSecretScrubber, REDACTED } from "./secret-scrubber";

export type { Logger } from "pino";
export type LogLevel = Level | "silent";

export interface CreateLoggerOptions {
  service: string;
  level?: LogLevel;
  /** Where records go; stdout when omitted. Tests pass a stream to read the records back. */
  destination?: DestinationStream;
  /** Values that must never be written (the process's configured keys and passwords). */
  secrets?: readonly string[];
}

/**
 * Fields that hold credentials wherever they appear in a record (request headers, SDK options, errors
 * that carry their request). The value scrubber below also catches secrets inside other strings.
 */
const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  '*.headers["x-api-key"]',
  "apiKey",
  "*.apiKey",
  "api_key",
  "*.api_key",
  "password",
  "*.password",
];

/** The ids every record about a wake carries, so logs, events and spans join on the same keys. */
export interface WakeLogIds {
  tenantId?: string;
  sessionId?: string;
  wakeId?: string;
}

/**
 * JSON logger whose every record carries the `trace_id`/`span_id` of the span active when it is
 * written, so a log line leads to its trace. The mixin reads the OTel context at call time, which also
 * covers child loggers created before the span started. Secrets are removed by field and by value.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { service: options.service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: activeSpanIds,
      redact: { paths: REDACTED_PATHS, censor: REDACTED },
      // Runs on the serialized line, so a secret inside a message or an error's text is caught too.
      hooks: { streamWrite: createSecretScrubber(options.secrets) },
    },
    options.destination,
  );
}

/** A child logger bound to a wake's ids, under the field names DESIGN §9 fixes. */
export function withWakeIds(log: Logger, ids: WakeLogIds): Logger {
  return log.child({
    ...(ids.tenantId === undefined ? {} : { tenant_id: ids.tenantId }),
    ...(ids.sessionId === undefined ? {} : { session_id: ids.sessionId }),
    ...(ids.wakeId === undefined ? {} : { wake_id: ids.wakeId }),
  });
}

function activeSpanIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
