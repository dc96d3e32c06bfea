import { createClient, WakeloopApiError, type WakeloopClient } from "@wakeloop/sdk";

// The key lives in sessionStorage: it survives reloads of this tab and is gone when the tab closes.
const KEY_ITEM = "wakeloop.apiKey";

export type Client = WakeloopClient;

/**
 * A client of the gateway that served this page (same origin: no CORS, no base URL to configure).
 * `onRefused` runs when the gateway stops accepting the key (revoked, or its tenant removed).
 */
export function clientFor(apiKey: string, onRefused?: () => void): Client {
  const refusing: typeof fetch = async (input, init) => {
    const response = await window.fetch(input, init);
    if (response.status === 401) onRefused?.();
    return response;
  };
  return createClient({ baseUrl: window.location.origin, apiKey, fetch: refusing });
}

export function storedKey(): string | null {
  return window.sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(apiKey: string | null): void {
  if (apiKey === null) window.sessionStorage.removeItem(KEY_ITEM);
  else window.sessionStorage.setItem(KEY_ITEM, apiKey);
}

/** What to show a person for a failed call: the API's own message, with its details when it gave any. */
export function describeError(error: unknown): string {
  if (error instanceof WakeloopApiError) {
    const details = (error.error as { details?: unknown }).details;
    return details === undefined ? error.message : `${error.message} — ${JSON.stringify(details)}`;
  }
  return error instanceof Error ? error.message : String(error);
}
