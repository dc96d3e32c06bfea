/**
 * The signal one request hands its SDK, aborted when `caller` aborts, and released when the request
 * ends. The OpenAI SDK adds an abort listener to the signal it is given and never removes it; given
 * the caller's signal (one per wake, shared by every request of the wake) that left a listener per
 * request on it, each making the next `addEventListener` walk a longer list, all firing on abort.
 */
export function requestSignal(caller: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  const own = new AbortController();
  if (caller === undefined) return { signal: own.signal, release: () => {} };
  if (caller.aborted) {
    own.abort(caller.reason);
    return { signal: own.signal, release: () => {} };
  }
  const forward = () => own.abort(caller.reason);
  caller.addEventListener("abort", forward, { once: true });
  return { signal: own.signal, release: () => caller.removeEventListener("abort", forward) };
}
