import { type Span, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { toWellFormedText } from "@wakeloop/contracts";
import {
  type ModelClient,
  type ModelDelta,
  ModelError,
  type ModelRequest,
  type ModelResponse,
  retryDelayMs,
} from "@wakeloop/model-providers";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GenAiOperation,
} from "@wakeloop/telemetry";
import { secondsSince, totalInputTokens, type WakeMetrics } from "../wake-metrics";

export interface RetryPolicy {
  /** Retries after the first attempt for overload, rate limits and failed requests. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  random: () => number;
}

export interface ModelCallHooks {
  /** A retryable failure; the call is tried again after `delayMs`. */
  onRetry(error: ModelError, attempt: number, delayMs: number): Promise<void>;
}

/**
 * One model request as a `chat {model}` span, retried with backoff while the provider says trying
 * again can help. The response comes back with its text well-formed (`toWellFormedText`). Throws the last ModelError when retries run out or the error is terminal; an abort
 * of `signal` (interrupt, lost lease) throws `model_aborted` at once.
 */
export async function callModel(
  tracer: Tracer,
  client: ModelClient,
  request: ModelRequest,
  options: {
    signal: AbortSignal;
    retry: RetryPolicy;
    hooks: ModelCallHooks;
    metrics: WakeMetrics;
    /** Each piece of the answer as it arrives, with the attempt it belongs to (a retry starts again). */
    onDelta?: (delta: ModelDelta, attempt: number) => void;
  },
): Promise<ModelResponse> {
  const { metrics, onDelta } = options;
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    try {
      return await tracer.startActiveSpan(`chat ${request.model}`, async (span) => {
        span.setAttributes({
          [ATTR_GEN_AI_OPERATION_NAME]: GenAiOperation.chat,
          [ATTR_GEN_AI_PROVIDER_NAME]: client.provider,
          [ATTR_GEN_AI_REQUEST_MODEL]: request.model,
        });
        try {
          const response = await client.complete(request, {
            signal: options.signal,
            ...(onDelta !== undefined && { onDelta: (delta: ModelDelta) => onDelta(delta, attempt) }),
          });
          metrics.modelRequest(client.provider, request.model, secondsSince(started));
          const { usage } = response;
          metrics.tokens(client.provider, request.model, usage);
          span.setAttributes({
            [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: totalInputTokens(usage),
            [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.output_tokens,
            [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.cache_read_input_tokens,
            [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: usage.cache_creation_input_tokens,
          });
          // A NUL or lone surrogate in the model's text or tool arguments cannot be stored; repaired
          // here, tools run on exactly the input their agent.tool_use records.
          return toWellFormedText(response);
        } catch (error) {
          const failure = asModelError(error);
          metrics.modelRequest(client.provider, request.model, secondsSince(started), failure.code);
          throw recordError(span, failure);
        } finally {
          span.end();
        }
      });
    } catch (error) {
      const failure = asModelError(error);
      const { retry } = options;
      const delay =
        attempt <= retry.maxRetries
          ? retryDelayMs(failure, attempt, {
              random: retry.random,
              baseMs: retry.baseDelayMs,
              maxMs: retry.maxDelayMs,
            })
          : null;
      if (delay === null || options.signal.aborted) throw failure;
      await options.hooks.onRetry(failure, attempt, delay);
      await sleep(delay, options.signal);
    }
  }
}

/** Model clients throw ModelError for every provider failure; anything else is our own bug. */
function asModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  return new ModelError("model_request_failed", error instanceof Error ? error.message : String(error), {
    cause: error,
  });
}

function recordError(span: Span, error: ModelError): ModelError {
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  return error;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
