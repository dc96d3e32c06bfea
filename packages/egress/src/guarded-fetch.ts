import { type RequestInfo, type RequestInit, Response, fetch as undiciFetch } from "undici";
import { capBody, tooLarge } from "./capped-body";
import { dispatchableHeaders, dispatchedFetch } from "./dispatched-fetch";
import { EgressError } from "./egress-error";
import { createGuardedDispatcher, type GuardedDispatcherOptions } from "./guarded-dispatcher";

export interface GuardedFetchOptions extends GuardedDispatcherOptions {
  /** Largest response body read; more is an `egress_response_too_large` error. */
  maxResponseBytes: number;
  /** The whole exchange, body included; longer is an `egress_timeout` error. */
  timeoutMs: number;
  /**
   * `false` for clients whose requests carry credentials (provider keys): a 3xx is an
   * `egress_redirect_refused` error, so a header never follows a redirect. `true` follows redirects;
   * each new connection is checked like the first, so a redirect to a refused address still fails.
   */
  followRedirects: boolean;
}

/** The fetch signature the provider SDKs take in their `fetch` option. */
export type Fetch = (
  input: string | URL | Request,
  init?: globalThis.RequestInit,
) => Promise<globalThis.Response>;

/**
 * The one way a worker makes a request a tenant can aim (model base URLs now, fetch and MCP tools
 * later): every connection through the guarded dispatcher, bounded in size and time.
 */
export function createGuardedFetch(options: GuardedFetchOptions): Fetch {
  const dispatcher = createGuardedDispatcher(options);
  const guarded = async (input: RequestInfo, init: RequestInit = {}): Promise<Response> => {
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      // Worded without "timed out": SDKs match that text and would drop the cause that says why.
      deadline.abort(
        new EgressError(
          "egress_timeout",
          `the request took longer than the egress limit of ${options.timeoutMs} ms`,
          {
            limit: options.timeoutMs,
          },
        ),
      );
    }, options.timeoutMs);
    const done = () => clearTimeout(timer);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    let response: Response;
    try {
      response = await undiciFetch(input, {
        ...init,
        signal,
        dispatcher,
        redirect: options.followRedirects ? "follow" : "manual",
      });
    } catch (error) {
      done();
      throw error;
    }
    if (!options.followRedirects && response.status >= 300 && response.status < 400) {
      done();
      await response.body?.cancel();
      throw new EgressError(
        "egress_redirect_refused",
        `the server answered with a redirect (${response.status}); redirects are not followed for requests that carry credentials`,
      );
    }
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (declared > options.maxResponseBytes) {
      done();
      await response.body?.cancel();
      throw tooLarge(options.maxResponseBytes);
    }
    if (response.body === null) {
      done();
      return response;
    }
    const capped = new Response(capBody(response.body, options.maxResponseBytes, done), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // A constructed Response has no URL; callers that followed redirects need to know where they ended.
    Object.defineProperty(capped, "url", { value: response.url });
    return capped;
  };
  if (options.followRedirects) {
    // undici's fetch is the WHATWG fetch; its types are a twin of the global ones.
    return guarded as unknown as Fetch;
  }
  // Without redirects to follow, the dispatcher alone does what fetch would, for much less CPU.
  const dispatched = (input: RequestInfo, init: RequestInit = {}): Promise<Response> => {
    const headers = dispatchableHeaders(input, init);
    return headers === undefined
      ? guarded(input, init)
      : dispatchedFetch(dispatcher, options, input as string | URL, init, headers);
  };
  return dispatched as unknown as Fetch;
}
