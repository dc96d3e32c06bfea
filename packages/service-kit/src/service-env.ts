import { WakeloopError } from "@wakeloop/contracts";
import { z } from "zod";

/** A TCP port; 0 lets the OS pick a free one (tests), and the service logs the one it got. */
export function portNumber() {
  return z.coerce.number().int().min(0).max(65_535);
}

/** A whole-number setting of at least `min`, `fallback` when unset. */
export function envCount(min: number, fallback: number) {
  return z.coerce.number().int().min(min).default(fallback);
}

/** The OpenTelemetry `OTEL_METRICS_EXPORTER` values we support (the spec's list, less `console`). */
const METRICS_EXPORTERS = ["otlp", "prometheus", "none"] as const;
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/**
 * The settings every service shares. Defaults work on a developer machine where
 * `infra/ensure-services.sh` has started Postgres and NATS; production sets them all explicitly.
 */
export const ServiceEnv = z.object({
  DATABASE_URL: z
    .url()
    .default("postgres://wakeloop_app@127.0.0.1:5432/wakeloop")
    .describe("Postgres is the source of truth; services connect as the app role that row security binds"),
  DATABASE_POOL_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .default(10)
    .describe(
      "Postgres connections this process may hold (pg's own default, 10); keep the sum over all processes under Postgres' max_connections",
    ),
  NATS_URL: z
    .string()
    .default("nats://127.0.0.1:4222")
    .transform((value) => value.split(",").map((server) => server.trim()))
    .pipe(z.array(z.url()).min(1))
    .describe(
      "NATS JetStream carries committed events, wake jobs and service calls; comma-separate a cluster",
    ),
  NATS_STREAM_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe(
      "Copies of each JetStream stream: 3 on a three-node cluster so a lost node loses nothing; 1 on one server; the same for every service",
    ),
  NATS_USER: z
    .string()
    .min(1)
    .optional()
    .describe("This service's own NATS user, whose permissions cover only the subjects it needs"),
  NATS_PASSWORD: z
    .string()
    .min(1)
    .optional()
    .describe("The password of NATS_USER; set both or neither (a server without auth takes neither)"),
  NATS_ALLOW_ANONYMOUS: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true")
    .describe(
      "Development only: lets the service connect without NATS_USER/NATS_PASSWORD to a NATS without auth; refused otherwise",
    ),
  WL_SUBJECT_PREFIX: z
    .string()
    .min(1)
    .default("wl")
    .describe("Starts every subject and stream name, so deployments and test runs can share one NATS"),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url()
    .optional()
    .describe("OTLP/HTTP endpoint (e.g. Jaeger on :4318) that also receives spans; Postgres always does"),
  OTEL_METRICS_EXPORTER: z
    .string()
    .default("otlp,prometheus")
    .transform((value) => value.split(",").map((exporter) => exporter.trim()))
    .pipe(z.array(z.enum(METRICS_EXPORTERS)).min(1))
    .describe(
      "Where metrics go: prometheus serves GET /metrics on METRICS_PORT, otlp pushes them to OTEL_EXPORTER_OTLP_ENDPOINT (leave it out for a traces-only backend such as Jaeger), none turns both off",
    ),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info").describe("Least severe pino level written to stdout"),
  SHUTDOWN_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(8_000)
    .describe("How long in-flight work may take to stop on SIGTERM; keep it under the kill grace period"),
});

/**
 * The shared settings plus the health and metrics ports, whose defaults differ per service so all run
 * on one host (the metrics ones from 9464, the OpenTelemetry Prometheus exporter's usual port). Both
 * answer without authentication, so they bind loopback unless the operator opens them, as a container
 * whose probes or scraper come from outside must.
 */
export function serviceEnv(defaults: { healthPort: number; metricsPort: number }) {
  return ServiceEnv.extend({
    HEALTH_PORT: portNumber()
      .default(defaults.healthPort)
      .describe("Serves /healthz and /readyz apart from any API port, so probes never queue behind traffic"),
    HEALTH_HOST: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .describe(
        "Address the unauthenticated health port binds; 0.0.0.0 when probes come from outside the host",
      ),
    METRICS_PORT: portNumber()
      .default(defaults.metricsPort)
      .describe("Serves GET /metrics for Prometheus to scrape, apart from the API and probe ports"),
    METRICS_HOST: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .describe(
        "Address the unauthenticated metrics port binds; 0.0.0.0 when Prometheus scrapes from elsewhere",
      ),
  });
}

export type ServiceConfig = z.output<ReturnType<typeof serviceEnv>>;

/**
 * The service's NATS credentials. Without them the service starts only where NATS_ALLOW_ANONYMOUS says
 * this is a development machine: in production an anonymous connection means a NATS without auth,
 * where any process that reaches it can publish events, wake jobs and sandbox calls. Half a pair is
 * refused too: connecting anonymously instead would only fail later, on the first denied subject.
 */
export function natsCredentials(
  config: Pick<ServiceConfig, "NATS_USER" | "NATS_PASSWORD" | "NATS_ALLOW_ANONYMOUS">,
) {
  const { NATS_USER: user, NATS_PASSWORD: password } = config;
  if (user === undefined && password === undefined) {
    if (config.NATS_ALLOW_ANONYMOUS) return undefined;
    throw new WakeloopError(
      "invalid_config",
      "NATS_USER and NATS_PASSWORD are not set: set this service's own NATS user (infra/nats/auth.conf), or NATS_ALLOW_ANONYMOUS=true on a development machine whose NATS has no auth",
    );
  }
  if (user === undefined || password === undefined)
    throw new WakeloopError("invalid_config", "NATS_USER and NATS_PASSWORD must be set together");
  return { user, password };
}
