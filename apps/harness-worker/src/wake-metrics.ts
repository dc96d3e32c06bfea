import type { TokenUsage } from "@wakeloop/contracts";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_WAKELOOP_STOP_REASON,
  boundedAttributes,
  GEN_AI_DURATION_BUCKETS_S,
  GEN_AI_TOKEN_BUCKETS,
  GenAiOperation,
  type Meter,
  MetricName,
  STEP_DURATION_BUCKETS_S,
} from "@wakeloop/telemetry";

/** Stands for "no value" in a bounded attribute set: `error.type` or `gen_ai.token.type` is left out. */
const ABSENT = "";
/** Distinct provider × model × error × token type, and tool × error, combinations before `_other`. */
const MODEL_SERIES_LIMIT = 200;
const TOOL_SERIES_LIMIT = 500;

/** How a tool call ended, as its `error.type`: an error result, a throw, or an interrupt. */
export type ToolErrorType = "tool_error" | "exception" | "cancelled";

/** What a wake records; made once per worker process from the service's meter. */
export interface WakeMetrics {
  wakeStarted(): void;
  /** `stopReason`: the idle stop reason, or `error` / `lease_lost` when the wake did not end a turn. */
  wakeFinished(stopReason: string, seconds: number): void;
  /** One model request attempt; `errorType` is the ModelError code when it failed. */
  modelRequest(provider: string, model: string, seconds: number, errorType?: string): void;
  /** One model request's usage; `input` counts every input token, cached or not (the GenAI conventions'). */
  tokens(provider: string, model: string, usage: TokenUsage): void;
  /** One model request's cost at the operator's prices; not called when its model has no price. */
  cost(provider: string, model: string, microUsd: number): void;
  toolCall(tool: string, seconds: number, errorType?: ToolErrorType): void;
}

/**
 * The harness's instruments (docs/observability.md). Model metrics carry the GenAI semantic
 * conventions' attributes, `gen_ai.provider.name` and the older `gen_ai.system` alike, so dashboards
 * written for either find them. No session or wake ids: those are in traces, not labels.
 */
export function createWakeMetrics(meter: Meter): WakeMetrics {
  const started = meter.createCounter(MetricName.wakesStarted, {
    description: "Wakes whose lease a worker took",
  });
  const finished = meter.createCounter(MetricName.wakesFinished, {
    description: "Wakes ended, by stop reason",
  });
  const wakeDuration = meter.createHistogram(MetricName.wakeDuration, {
    unit: "s",
    description: "Lease taken to wake ended, by stop reason",
    advice: { explicitBucketBoundaries: STEP_DURATION_BUCKETS_S },
  });
  const operationDuration = meter.createHistogram(MetricName.genAiOperationDuration, {
    unit: "s",
    description: "GenAI operation duration: one model request",
    advice: { explicitBucketBoundaries: GEN_AI_DURATION_BUCKETS_S },
  });
  const tokenUsage = meter.createHistogram(MetricName.genAiTokenUsage, {
    unit: "{token}",
    description: "Tokens used by one model request, by token type",
    advice: { explicitBucketBoundaries: GEN_AI_TOKEN_BUCKETS },
  });
  const cacheTokens = meter.createCounter(MetricName.modelCacheTokens, {
    unit: "{token}",
    description: "Prompt-cache tokens of model requests, read or written, by token type",
  });
  const modelCost = meter.createCounter(MetricName.modelCost, {
    description: "What model requests cost at the operator's prices, in micro-USD",
  });
  const toolDuration = meter.createHistogram(MetricName.toolDuration, {
    unit: "s",
    description: "One tool call, by tool and error type",
    advice: { explicitBucketBoundaries: STEP_DURATION_BUCKETS_S },
  });
  const toolErrors = meter.createCounter(MetricName.toolErrors, {
    description: "Tool calls that ended in an error, by tool and error type",
  });

  // Stop reasons are a closed set of ours, so they need no bound; the rest may come from tenants.
  const byStopReason = new Map<string, { [ATTR_WAKELOOP_STOP_REASON]: string }>();
  const stopReasonAttributes = (stopReason: string) => {
    let attributes = byStopReason.get(stopReason);
    if (attributes === undefined) {
      attributes = { [ATTR_WAKELOOP_STOP_REASON]: stopReason };
      byStopReason.set(stopReason, attributes);
    }
    return attributes;
  };
  const modelAttributes = boundedAttributes(
    MODEL_SERIES_LIMIT,
    (provider: string, model: string, errorType: string, tokenType: string) => ({
      [ATTR_GEN_AI_OPERATION_NAME]: GenAiOperation.chat,
      [ATTR_GEN_AI_PROVIDER_NAME]: provider,
      [ATTR_GEN_AI_SYSTEM]: provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: model,
      ...(errorType === ABSENT ? {} : { [ATTR_ERROR_TYPE]: errorType }),
      ...(tokenType === ABSENT ? {} : { [ATTR_GEN_AI_TOKEN_TYPE]: tokenType }),
    }),
  );
  const toolAttributes = boundedAttributes(TOOL_SERIES_LIMIT, (tool: string, errorType: string) => ({
    [ATTR_GEN_AI_TOOL_NAME]: tool,
    ...(errorType === ABSENT ? {} : { [ATTR_ERROR_TYPE]: errorType }),
  }));

  return {
    wakeStarted: () => started.add(1),
    wakeFinished(stopReason, seconds) {
      const attributes = stopReasonAttributes(stopReason);
      finished.add(1, attributes);
      wakeDuration.record(seconds, attributes);
    },
    modelRequest(provider, model, seconds, errorType = ABSENT) {
      operationDuration.record(seconds, modelAttributes(provider, model, errorType, ABSENT));
    },
    tokens(provider, model, usage) {
      tokenUsage.record(totalInputTokens(usage), modelAttributes(provider, model, ABSENT, "input"));
      tokenUsage.record(usage.output_tokens, modelAttributes(provider, model, ABSENT, "output"));
      cacheTokens.add(usage.cache_read_input_tokens, modelAttributes(provider, model, ABSENT, "cache_read"));
      cacheTokens.add(
        usage.cache_creation_input_tokens,
        modelAttributes(provider, model, ABSENT, "cache_creation"),
      );
    },
    cost(provider, model, microUsd) {
      modelCost.add(microUsd, modelAttributes(provider, model, ABSENT, ABSENT));
    },
    toolCall(tool, seconds, errorType) {
      toolDuration.record(seconds, toolAttributes(tool, errorType ?? ABSENT));
      if (errorType !== undefined) toolErrors.add(1, toolAttributes(tool, errorType));
    },
  };
}

/** Input tokens of a request however the provider's cache served them, as the GenAI conventions count input. */
export function totalInputTokens(usage: TokenUsage): number {
  return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
}

/** Seconds since `start`, a `performance.now()` reading. */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1_000;
}
