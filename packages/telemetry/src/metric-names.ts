/**
 * Every metric the services export, by its OpenTelemetry name. The Prometheus endpoint turns dots
 * into underscores and gives counters a `_total` suffix (`wakeloop.wakes.started` is scraped as
 * `wakeloop_wakes_started_total`); docs/observability.md lists both. The GenAI ones follow the
 * OpenTelemetry GenAI semantic conventions, so dashboards made for any GenAI client read them.
 */
export const MetricName = {
  /** Histogram (s): one model request, by provider, model and `error.type` when it failed. */
  genAiOperationDuration: "gen_ai.client.operation.duration",
  /** Histogram ({token}): tokens of one model request, by provider, model and `gen_ai.token.type`. */
  genAiTokenUsage: "gen_ai.client.token.usage",
  /** Counter ({token}): prompt-cache tokens of model requests, by provider, model and `gen_ai.token.type` (`cache_read`, `cache_creation`). */
  modelCacheTokens: "wakeloop.model.cache_tokens",
  /** Counter: what model requests cost at the operator's prices, in micro-USD, by provider and model. */
  modelCost: "wakeloop.model.cost_micro_usd",
  /** Counter: wakes a worker took the lease of. */
  wakesStarted: "wakeloop.wakes.started",
  /** Counter: wakes ended, by `wakeloop.stop_reason`. */
  wakesFinished: "wakeloop.wakes.finished",
  /** Histogram (s): lease taken → wake ended, by `wakeloop.stop_reason`. */
  wakeDuration: "wakeloop.wake.duration",
  /** Histogram (s): one tool call, by `gen_ai.tool.name` and `error.type` when it failed. */
  toolDuration: "wakeloop.tool.duration",
  /** Counter: tool calls that ended in an error result, by `gen_ai.tool.name` and `error.type`. */
  toolErrors: "wakeloop.tool.errors",
  /** Gauge: wake jobs published and not yet taken by a worker. */
  wakeQueueDepth: "wakeloop.wake_queue.depth",
  /** Gauge (s): how long the oldest wake job not yet taken has waited; 0 when none waits. */
  wakeQueueAge: "wakeloop.wake_queue.oldest_age",
  /** Gauge: wake jobs a worker holds (delivered, not yet acknowledged). */
  wakeQueueInProgress: "wakeloop.wake_queue.in_progress",
  /** Counter: expired wake leases the sweeper acted on, by `wakeloop.lease.outcome`. */
  leaseExpiries: "wakeloop.lease.expiries",
  /** Histogram (ms): outbox message committed → acknowledged by JetStream, recorded once per message. */
  outboxLag: "wakeloop.outbox.relay.lag",
  /** Counter: outbox relay rounds run as the leader (one statement each); with the lag's count, messages per round. */
  outboxRounds: "wakeloop.outbox.relay.rounds",
  /** Gauge: pre-created sandbox containers waiting in warm pools. */
  sandboxPoolSize: "wakeloop.sandbox.pool.size",
  /** Gauge: sandboxes bound to sessions on this runner. */
  sandboxesActive: "wakeloop.sandbox.active",
  /** Histogram (s): one API request, by `http.request.method`, `http.route`, `http.response.status_code`. */
  httpServerDuration: "http.server.request.duration",
} as const;

/** Metric attribute names beyond the GenAI ones in attributes.ts. */
export const ATTR_GEN_AI_SYSTEM = "gen_ai.system";
export const ATTR_GEN_AI_TOKEN_TYPE = "gen_ai.token.type";
export const ATTR_ERROR_TYPE = "error.type";
export const ATTR_WAKELOOP_STOP_REASON = "wakeloop.stop_reason";
export const ATTR_WAKELOOP_LEASE_OUTCOME = "wakeloop.lease.outcome";

/** Bucket boundaries the GenAI semantic conventions advise, so histograms from every client line up. */
export const GEN_AI_DURATION_BUCKETS_S = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
export const GEN_AI_TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** Tool calls and wakes range from a millisecond (inline tools) to minutes (commands, long turns). */
export const STEP_DURATION_BUCKETS_S = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];
