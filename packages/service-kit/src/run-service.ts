import { type Bus, connectBus } from "@wakeloop/bus";
import { WakeloopError } from "@wakeloop/contracts";
import { createDb, type Database, redactUrl, roleBypassesRowSecurity } from "@wakeloop/db";
import {
  createLogger,
  type Logger,
  type MetricsServer,
  startTelemetry,
  type Telemetry,
} from "@wakeloop/telemetry";
import { type Kysely, sql } from "kysely";
import { configSecrets } from "./config-secrets";
import { withDeadline } from "./deadline";
import { type HealthServer, startHealthServer } from "./health-server";
import { natsCredentials, type ServiceConfig } from "./service-env";
import type { ServiceContext, Stoppable } from "./stoppable";

export interface RunServiceOptions<C extends ServiceConfig> {
  /** Service name in logs, spans and the NATS connection. */
  name: string;
  config: C;
  /** Starts the app's work on the opened connections; resolves once the app takes work. */
  start(context: ServiceContext<C>): Promise<Stoppable>;
}

interface Running {
  health: HealthServer;
  metrics: MetricsServer | null;
  db: Kysely<Database>;
  telemetry: Telemetry;
  bus: Bus;
  stoppable: Stoppable;
}

/** Each connection gets this long to close once the app's work has stopped. */
const CLOSE_TIMEOUT_MS = 5_000;
/** A readiness probe answers within this, whatever state the dependencies are in. */
const PROBE_TIMEOUT_MS = 1_000;

/**
 * The lifecycle every service shares. Start-up: logger, health server (live, not ready), Postgres
 * (checked with a query), telemetry and its /metrics server, NATS, then the app's `start`; any
 * failure there is fatal and exits 1, since a supervisor restarting us is the only useful retry. On
 * SIGTERM/SIGINT: readiness drops, the app stops taking work within SHUTDOWN_TIMEOUT_MS, NATS drains,
 * spans flush into Postgres (so before Postgres closes) and /metrics closes, Postgres closes; exit 0
 * when every step finished in time.
 */
export async function runService<C extends ServiceConfig>(options: RunServiceOptions<C>): Promise<void> {
  const { name, config } = options;
  const secrets = configSecrets(config);
  const log = createLogger({ service: name, level: config.LOG_LEVEL, secrets });
  exitOnCrash(log);

  let phase: "starting" | "running" | "stopping" = "starting";
  let signalDuringStartUp: NodeJS.Signals | undefined;
  let running: Running | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (phase === "stopping") {
      log.warn({ signal }, "second signal during shutdown; exiting now");
      process.exit(1);
    }
    if (running === undefined) {
      signalDuringStartUp = signal;
      log.info({ signal }, "signal during start-up; stopping once start-up ends");
      return;
    }
    phase = "stopping";
    void shutdown(running, signal, config.SHUTDOWN_TIMEOUT_MS, log);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  try {
    // Before any port opens: a service that may not connect to NATS as it is configured never starts.
    const credentials = natsCredentials(config);
    const health = await startHealthServer({
      port: config.HEALTH_PORT,
      host: config.HEALTH_HOST,
      readiness: async () => {
        if (running === undefined || phase !== "running") return { accepting_work: false };
        return readinessChecks(running);
      },
    });
    const db = createDb({ url: config.DATABASE_URL, max: config.DATABASE_POOL_MAX });
    await checkPostgres(db, config.DATABASE_URL);
    const telemetry = startTelemetry({
      serviceName: name,
      otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
      db,
      otlpMetrics: config.OTEL_METRICS_EXPORTER.includes("otlp"),
      secrets,
    });
    const metrics = config.OTEL_METRICS_EXPORTER.includes("prometheus")
      ? await telemetry.serveMetrics({ port: config.METRICS_PORT, host: config.METRICS_HOST })
      : null;
    const bus = await connectBus({
      servers: config.NATS_URL,
      prefix: config.WL_SUBJECT_PREFIX,
      name,
      credentials,
      catalog: { replicas: config.NATS_STREAM_REPLICAS },
    });
    const stoppable = await options.start({
      name,
      config,
      log,
      db,
      bus,
      tracer: telemetry.tracer,
      meter: telemetry.meter,
    });
    running = { health, metrics, db, telemetry, bus, stoppable };
  } catch (error) {
    log.fatal({ err: error }, "start-up failed");
    process.exit(1);
  }

  if (signalDuringStartUp !== undefined) return onSignal(signalDuringStartUp);
  phase = "running";
  log.info({ port: running.health.port, metrics_port: running.metrics?.port }, "ready");
}

async function readinessChecks(running: Running): Promise<Record<string, boolean>> {
  const [postgres, nats] = await Promise.all([
    withDeadline(PROBE_TIMEOUT_MS, () => sql`select 1`.execute(running.db)),
    withDeadline(PROBE_TIMEOUT_MS, () => running.bus.nc.rtt()),
  ]);
  return {
    postgres: postgres.status === "done",
    nats: nats.status === "done",
    app: running.stoppable.isReady?.() ?? true,
  };
}

async function checkPostgres(db: Kysely<Database>, url: string): Promise<void> {
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    throw new WakeloopError("postgres_unreachable", `cannot query Postgres at ${redactUrl(url)}`, {
      cause: error,
      retryable: true,
    });
  }
  // Row-level security is the second wall between tenants (issue #8); a service must not start
  // without it, e.g. with the migration owner's url left in DATABASE_URL.
  if (await roleBypassesRowSecurity(db)) {
    throw new WakeloopError(
      "database_role_bypasses_rls",
      `the role in ${redactUrl(url)} is a superuser or bypasses row-level security; connect services as the app role (migrate --app-role)`,
    );
  }
}

async function shutdown(running: Running, signal: NodeJS.Signals, stopTimeoutMs: number, log: Logger) {
  log.info({ signal }, "shutting down");
  const steps: [string, number, (signal: AbortSignal) => Promise<unknown>][] = [
    ["stop taking work", stopTimeoutMs, (deadline) => running.stoppable.stop(deadline)],
    ["drain NATS", CLOSE_TIMEOUT_MS, () => running.bus.close()],
    ["flush telemetry", CLOSE_TIMEOUT_MS, () => running.telemetry.shutdown()],
    ["close Postgres", CLOSE_TIMEOUT_MS, () => running.db.destroy()],
    ["close health server", CLOSE_TIMEOUT_MS, () => running.health.close()],
  ];
  let clean = true;
  for (const [step, ms, work] of steps) {
    const outcome = await withDeadline(ms, work);
    if (outcome.status === "done") continue;
    clean = false;
    if (outcome.status === "timed_out") log.warn({ step, timeout_ms: ms }, "shutdown step timed out");
    else log.error({ step, err: outcome.error }, "shutdown step failed");
  }
  log.info({ clean }, "stopped");
  process.exit(clean ? 0 : 1);
}

/** An error nothing caught leaves the process in an unknown state; log it as JSON and let the supervisor restart us. */
function exitOnCrash(log: Logger): void {
  process.on("uncaughtException", (error) => {
    log.fatal({ err: error }, "uncaught exception");
    process.exit(1);
  });
  process.on("unhandledRejection", (reason) => {
    log.fatal({ err: reason }, "unhandled promise rejection");
    process.exit(1);
  });
}
