import { z } from "zod";

/** Error payload on the API: `{error:{type, message, details}}`. Never a stack trace. */
export const ApiErrorType = z.enum([
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "conflict_error",
  "payload_too_large_error",
  "rate_limit_error",
  "api_error",
  "overloaded_error",
]);
export type ApiErrorType = z.infer<typeof ApiErrorType>;

export const ApiError = z.object({
  error: z.object({ type: ApiErrorType, message: z.string(), details: z.unknown().optional() }),
});
export type ApiError = z.infer<typeof ApiError>;

/** Error payload that crosses the bus (RPC replies, dead letters). */
export const BusError = z.object({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean(),
  details: z.unknown().optional(),
});
export type BusError = z.infer<typeof BusError>;

/**
 * The one base error. `code` is stable and machine-readable; `retryable` says whether trying the
 * same thing again can help.
 */
export class WakeloopError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: unknown;

  constructor(
    code: string,
    message: string,
    options: { retryable?: boolean; cause?: unknown; details?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "WakeloopError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }

  toBusError(): BusError {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}
