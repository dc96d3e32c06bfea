import { WakeloopError } from "@wakeloop/contracts";

export type WebErrorCode =
  | "web_invalid_url"
  | "web_unsupported_content"
  | "web_http_error"
  | "web_search_failed";

/**
 * A web tool call that could not give the model a page or results. The message says what happened
 * and what to try; it holds nothing the remote side sent beyond a status, so it is safe to show.
 */
export class WebError extends WakeloopError {
  declare readonly code: WebErrorCode;

  constructor(code: WebErrorCode, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(code, message, options);
    this.name = "WebError";
  }
}
