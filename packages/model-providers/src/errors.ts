import {
  APIUserAbortError as AnthropicAbortError,
  APIError as AnthropicAPIError,
  APIConnectionTimeoutError as AnthropicTimeoutError,
} from "@anthropic-ai/sdk";
import { retryAfterMs, WakeloopError } from "@wakeloop/contracts";
import { findEgressError } from "@wakeloop/egress";
import {
  APIUserAbortError as OpenAIAbortError,
  APIError as OpenAIAPIError,
  APIConnectionTimeoutError as OpenAITimeoutError,
} from "openai";

export type ModelErrorCode =
  | "model_overloaded"
  | "model_rate_limited"
  | "model_request_failed"
  | "model_invalid_request"
  | "model_egress_refused"
  | "model_aborted";

const RETRYABLE: Record<ModelErrorCode, boolean> = {
  model_overloaded: true,
  model_rate_limited: true,
  model_request_failed: true,
  model_invalid_request: false,
  // The operator's egress rules refused the host or the response; asking again changes nothing.
  model_egress_refused: false,
  // The caller asked for the stop; trying again would undo its decision.
  model_aborted: false,
};

export interface ModelErrorDetails {
  /** HTTP status, when the provider answered with one. */
  status?: number;
  /** The provider's own error type (`overloaded_error`, `rate_limit_exceeded`, …). */
  providerType?: string;
  requestId?: string;
  /** How long the provider asked us to wait (`retry-after-ms` / `retry-after`). */
  retryAfterMs?: number;
}

/** Every failure of a model call. `retryable` follows from the code. */
export class ModelError extends WakeloopError {
  declare readonly code: ModelErrorCode;
  declare readonly details: ModelErrorDetails;

  constructor(
    code: ModelErrorCode,
    message: string,
    options: { cause?: unknown; details?: ModelErrorDetails } = {},
  ) {
    super(code, message, {
      retryable: RETRYABLE[code],
      cause: options.cause,
      details: options.details ?? {},
    });
    this.name = "ModelError";
  }
}

function codeFor(status: number | undefined, providerType: string | undefined): ModelErrorCode {
  if (status === 529 || status === 503 || providerType === "overloaded_error") return "model_overloaded";
  if (status === 429 || providerType === "rate_limit_error" || providerType === "rate_limit_exceeded") {
    return "model_rate_limited";
  }
  // Both SDKs treat request timeout and lock conflict as worth another try.
  if (status === 408 || status === 409) return "model_request_failed";
  if (status !== undefined && status >= 400 && status < 500) return "model_invalid_request";
  if (status === undefined && providerType === "invalid_request_error") return "model_invalid_request";
  return "model_request_failed";
}

const ANSWER: Record<ModelErrorCode, string> = {
  model_overloaded: "the provider is overloaded",
  model_rate_limited: "the provider's rate limit was reached",
  model_request_failed: "the request failed",
  model_invalid_request: "the provider refused the request",
  model_egress_refused: "the request was refused",
  model_aborted: "the request was aborted",
};

/**
 * What a session may be told about a provider's answer: its status and our classification. The
 * provider's body is never copied: whoever runs a base_url controls it, and it may echo secrets.
 */
function classifiedMessage(code: ModelErrorCode, status: number | undefined): string {
  const answered = status === undefined ? "the provider sent an error" : `the provider answered ${status}`;
  return `${answered}: ${ANSWER[code]}`;
}

/**
 * Maps whatever a provider call threw to a ModelError. An abort of `signal` wins over everything
 * else: once the caller stopped the request, the SDK's own error is a consequence, not a cause. The
 * egress guard's refusals keep their message (it names the rule, and nothing the server sent); errors
 * from outside the SDKs (a socket reset while reading the body) count as failed requests. Messages
 * never carry text a server sent; the cause keeps it for logs.
 */
export function toModelError(error: unknown, signal?: AbortSignal): ModelError {
  if (error instanceof ModelError) return error;
  if (signal?.aborted || error instanceof AnthropicAbortError || error instanceof OpenAIAbortError) {
    return new ModelError("model_aborted", "the model request was aborted", { cause: error });
  }
  const egress = findEgressError(error);
  if (egress !== undefined) {
    const code = egress.retryable ? "model_request_failed" : "model_egress_refused";
    return new ModelError(code, egress.message, { cause: error, details: {} });
  }
  if (error instanceof AnthropicTimeoutError || error instanceof OpenAITimeoutError) {
    return new ModelError("model_request_failed", "the model request timed out", { cause: error });
  }
  if (error instanceof AnthropicAPIError || error instanceof OpenAIAPIError) {
    const providerType = error.type ?? undefined;
    const details: ModelErrorDetails = {
      ...(error.status !== undefined && { status: error.status }),
      ...(providerType !== undefined && { providerType }),
      ...(error.requestID && { requestId: error.requestID }),
    };
    const wait = retryAfterMs(error.headers, Date.now());
    if (wait !== undefined) details.retryAfterMs = wait;
    const code = codeFor(error.status, providerType);
    return new ModelError(code, classifiedMessage(code, error.status), { cause: error, details });
  }
  return new ModelError("model_request_failed", "the model request failed before the provider answered", {
    cause: error,
  });
}

export interface BackoffOptions {
  /** Uniform in [0, 1); injected so schedules are reproducible in tests. */
  random: () => number;
  baseMs?: number;
  maxMs?: number;
}

/**
 * How long to wait before retry number `attempt` (1 = the first retry), or null when the error is not
 * worth retrying. Exponential backoff with full jitter; a provider's retry-after is a floor.
 */
export function retryDelayMs(error: unknown, attempt: number, options: BackoffOptions): number | null {
  if (!(error instanceof WakeloopError) || !error.retryable) return null;
  const { random, baseMs = 1_000, maxMs = 60_000 } = options;
  const ceiling = Math.min(maxMs, baseMs * 2 ** (Math.max(1, attempt) - 1));
  const jittered = Math.floor(random() * ceiling);
  const floor = error instanceof ModelError ? error.details.retryAfterMs : undefined;
  return floor === undefined ? jittered : Math.max(Math.ceil(floor), jittered);
}
