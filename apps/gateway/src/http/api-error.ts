import { type ApiError, type ApiErrorType, WakeloopError } from "@wakeloop/contracts";
import { isConnectionFailure } from "@wakeloop/db";

export interface HttpError {
  status: number;
  body: ApiError;
  /** A 5xx is our fault and is logged as an error; a 4xx is the client's and is not. */
  serverFault: boolean;
  /** Seconds after which the same request may succeed (429, 503), sent as `Retry-After`. */
  retryAfterSeconds?: number;
}

interface Mapping {
  status: number;
  type: ApiErrorType;
}

const BAD_REQUEST: Mapping = { status: 400, type: "invalid_request_error" };
const NOT_FOUND: Mapping = { status: 404, type: "not_found_error" };
const CONFLICT: Mapping = { status: 409, type: "conflict_error" };

/** WakeloopError codes the API answers with a 4xx; any `*_not_found` code is a 404. */
const BY_CODE: Readonly<Record<string, Mapping>> = {
  invalid_request: BAD_REQUEST,
  invalid_event: BAD_REQUEST,
  unknown_tool: BAD_REQUEST,
  invalid_tool_config: BAD_REQUEST,
  invalid_tool_schema: BAD_REQUEST,
  tool_name_conflict: BAD_REQUEST,
  reserved_tool_name: BAD_REQUEST,
  egress_refused: BAD_REQUEST,
  model_base_url_refused: BAD_REQUEST,
  provider_credentials_disabled: BAD_REQUEST,
  sandbox_limit_exceeded: BAD_REQUEST,
  invalid_exec_allowlist: BAD_REQUEST,
  action_not_pending: BAD_REQUEST,
  unauthenticated: { status: 401, type: "authentication_error" },
  forbidden: { status: 403, type: "permission_error" },
  not_found: NOT_FOUND,
  session_terminated: CONFLICT,
  agent_archived: CONFLICT,
  environment_archived: CONFLICT,
  idempotency_key_reused: CONFLICT,
  duplicate_event_id: CONFLICT,
  last_owner_key: CONFLICT,
  scheduled_task_limit: CONFLICT,
  memory_version_conflict: CONFLICT,
  memory_entry_too_large: { status: 413, type: "payload_too_large_error" },
  memory_store_full: CONFLICT,
  substrate_version_conflict: CONFLICT,
  substrate_file_too_large: { status: 413, type: "payload_too_large_error" },
  substrate_full: CONFLICT,
  payload_too_large: { status: 413, type: "payload_too_large_error" },
  rate_limited: { status: 429, type: "rate_limit_error" },
  quota_exceeded: { status: 429, type: "rate_limit_error" },
};

/** How soon a client may retry when a dependency (Postgres) is down: long enough not to pile on. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Fastify's own errors carry a status (bad JSON 400, body over the limit 413, wrong media type 415). */
function fastifyStatus(error: unknown): number | undefined {
  if (!(error instanceof Error) || !("statusCode" in error)) return undefined;
  const status = error.statusCode;
  return typeof status === "number" && status >= 400 && status < 600 ? status : undefined;
}

function typeForStatus(status: number): ApiErrorType {
  if (status === 404) return "not_found_error";
  if (status === 413) return "payload_too_large_error";
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

function respond(mapping: Mapping, message: string, details?: unknown): HttpError {
  const error =
    details === undefined ? { type: mapping.type, message } : { type: mapping.type, message, details };
  return { status: mapping.status, body: { error }, serverFault: mapping.status >= 500 };
}

function unavailable(message: string): HttpError {
  return {
    ...respond({ status: 503, type: "api_error" }, message),
    retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS,
  };
}

/** Quota errors say when the client may try again (`details.retry_after_seconds`). */
function retryAfterOf(error: WakeloopError): number | undefined {
  const details = error.details;
  if (typeof details !== "object" || details === null || !("retry_after_seconds" in details))
    return undefined;
  const seconds = details.retry_after_seconds;
  return typeof seconds === "number" && seconds > 0 ? Math.ceil(seconds) : undefined;
}

/**
 * The API answer for anything a handler throws. Client mistakes keep their message and details;
 * anything else becomes a generic 5xx so no internals (stack traces, SQL) leak.
 */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof WakeloopError) {
    const mapping = BY_CODE[error.code] ?? (error.code.endsWith("_not_found") ? NOT_FOUND : undefined);
    if (mapping !== undefined) {
      const retryAfterSeconds = retryAfterOf(error);
      const http = respond(mapping, error.message, error.details);
      return retryAfterSeconds === undefined ? http : { ...http, retryAfterSeconds };
    }
    if (error.retryable || isConnectionFailure(error))
      return unavailable("temporarily unavailable, retry later");
    return respond({ status: 500, type: "api_error" }, "internal error");
  }
  // A lost database connection is not the request's fault and not a bug: the same request can succeed.
  if (isConnectionFailure(error)) return unavailable("the database is unavailable, retry later");
  const status = fastifyStatus(error);
  if (status !== undefined && status < 500 && error instanceof Error) {
    return respond({ status, type: typeForStatus(status) }, error.message);
  }
  return respond({ status: 500, type: "api_error" }, "internal error");
}

export function notFound(what: string, id: string): WakeloopError {
  return new WakeloopError("not_found", `${what} ${id} not found`, { details: { id } });
}
