import { STATUS_CODES } from "node:http";
import type { Readable } from "node:stream";
import { type Dispatcher, Headers, type RequestInit, Response } from "undici";
import { tooLarge } from "./capped-body";
import { EgressError } from "./egress-error";

/** The limits `createGuardedFetch` applies; see GuardedFetchOptions. */
export interface ExchangeLimits {
  maxResponseBytes: number;
  timeoutMs: number;
}

// Statuses whose Response may not carry a body (the Fetch standard's null body statuses).
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The request's headers, when `dispatchedFetch` can send it as fetch would; undefined when only
 * fetch can: a `Request` object or a streamed body, or an `accept-encoding` the caller chose (fetch
 * decodes the answer, the dispatcher does not).
 */
export function dispatchableHeaders(input: unknown, init: RequestInit): Headers | undefined {
  if (typeof input !== "string" && !(input instanceof URL)) return undefined;
  const { body } = init;
  if (body !== undefined && body !== null && typeof body !== "string" && !ArrayBuffer.isView(body)) {
    return undefined;
  }
  const headers = new Headers(init.headers);
  if (headers.has("accept-encoding")) return undefined;
  // The type fetch gives a text body when the caller named none.
  if (typeof body === "string" && !headers.has("content-type")) {
    headers.set("content-type", "text/plain;charset=UTF-8");
  }
  return headers;
}

/**
 * A fetch, for requests whose redirects are refused, on undici's dispatcher API rather than its
 * WHATWG fetch. fetch builds a Request, copies the body into a stream, clones (tees) the request for
 * its redirect handling even when redirects are refused, and hands the answer through two more
 * streams; on a model request (a 100 kB body, a streamed answer) that was about a third of the
 * worker's CPU for the request. The limits, errors and Response are fetch's: what the dispatcher
 * throws before an answer is a `TypeError("fetch failed")` with it as `cause`, an abort rejects with
 * the signal's reason, and a redirect is an `egress_redirect_refused` error.
 */
export async function dispatchedFetch(
  dispatcher: Dispatcher,
  limits: ExchangeLimits,
  input: string | URL,
  init: RequestInit,
  headers: Headers,
): Promise<Response> {
  const url = typeof input === "string" ? new URL(input) : input;
  const exchange = new AbortController();
  const caller = init.signal ?? undefined;
  const follow = () => exchange.abort(caller?.reason);
  const timer = setTimeout(() => {
    // Worded without "timed out": SDKs match that text and would drop the cause that says why.
    exchange.abort(
      new EgressError(
        "egress_timeout",
        `the request took longer than the egress limit of ${limits.timeoutMs} ms`,
        { limit: limits.timeoutMs },
      ),
    );
  }, limits.timeoutMs);
  const done = () => {
    clearTimeout(timer);
    caller?.removeEventListener("abort", follow);
  };
  if (caller?.aborted) follow();
  else caller?.addEventListener("abort", follow, { once: true });

  let answer: Dispatcher.ResponseData;
  try {
    answer = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (init.method?.toUpperCase() ?? "GET") as Dispatcher.HttpMethod,
      headers,
      body: (init.body ?? null) as string | Uint8Array | null,
      signal: exchange.signal,
    });
  } catch (error) {
    done();
    if (exchange.signal.aborted) throw exchange.signal.reason;
    throw new TypeError("fetch failed", { cause: error });
  }
  const { statusCode, body } = answer;
  if (statusCode >= 300 && statusCode < 400) {
    done();
    discard(body);
    throw new EgressError(
      "egress_redirect_refused",
      `the server answered with a redirect (${statusCode}); redirects are not followed for requests that carry credentials`,
    );
  }
  if (Number(answer.headers["content-length"] ?? "0") > limits.maxResponseBytes) {
    done();
    discard(body);
    throw tooLarge(limits.maxResponseBytes);
  }
  const nullBody = NULL_BODY_STATUSES.has(statusCode) || init.method?.toUpperCase() === "HEAD";
  if (nullBody) {
    done();
    discard(body);
  }
  const response = new Response(nullBody ? null : capped(body, limits.maxResponseBytes, done), {
    status: statusCode,
    statusText: STATUS_CODES[statusCode] ?? "",
    headers: responseHeaders(answer.headers),
  });
  Object.defineProperty(response, "url", { value: url.href });
  return response;
}

/** Ends an answer no one will read; destroying an unfinished body errors it, and no one listens. */
function discard(body: Readable): void {
  body.on("error", () => {});
  body.destroy();
}

function responseHeaders(fields: Dispatcher.ResponseData["headers"]): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(fields)) {
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}

/**
 * `body`'s chunks until more than `maxBytes` arrived, then an `egress_response_too_large` error.
 * `onEnd` runs however the body ends, also when the reader cancels before its first read; leaving
 * early destroys `body`, which ends the request.
 */
function capped(body: Readable, maxBytes: number, onEnd: () => void): AsyncIterableIterator<Uint8Array> {
  const chunks = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  let received = 0;
  return {
    async next() {
      let step: IteratorResult<Uint8Array>;
      try {
        step = await chunks.next();
      } catch (error) {
        onEnd();
        throw error;
      }
      if (step.done) {
        onEnd();
        return step;
      }
      received += step.value.byteLength;
      if (received > maxBytes) {
        onEnd();
        await chunks.return?.();
        throw tooLarge(maxBytes);
      }
      return step;
    },
    async return() {
      onEnd();
      await chunks.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
