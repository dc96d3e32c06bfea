import { createGuardedFetch, normalizeHost } from "@wakeloop/egress";
import { type SearchBackend, searxngBackend } from "@wakeloop/web-access";
import type { HarnessWorkerConfig } from "../config";

/**
 * The operator's search backend. Its host was chosen by the operator, not a tenant, so it may be
 * internal (a SearXNG beside the platform); it gets its own guard so that allowance never extends to
 * what web_fetch may reach. Results are not redirects to follow, so none are.
 */
export function webSearch(
  url: string,
  config: Pick<HarnessWorkerConfig, "WEB_FETCH_MAX_BYTES" | "WEB_FETCH_TIMEOUT_MS">,
): SearchBackend {
  const fetch = createGuardedFetch({
    policy: { allowedHosts: [normalizeHost(new URL(url).hostname)] },
    maxResponseBytes: config.WEB_FETCH_MAX_BYTES,
    timeoutMs: config.WEB_FETCH_TIMEOUT_MS,
    followRedirects: false,
  });
  return searxngBackend(fetch, url);
}
