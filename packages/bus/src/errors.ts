import { type BusError, WakeloopError } from "@wakeloop/contracts";

/**
 * An error that is not a WakeloopError is a bug or an outage nobody classified; like Temporal we treat it
 * as retryable, because giving up on a message is the decision that cannot be undone.
 */
export function asWakeloopError(err: unknown): WakeloopError {
  if (err instanceof WakeloopError) return err;
  return new WakeloopError("internal_error", err instanceof Error ? err.message : String(err), {
    retryable: true,
    cause: err,
  });
}

/** The client side of an error that crossed the bus: same code and retryability as where it was thrown. */
export function fromBusError(error: BusError): WakeloopError {
  return new WakeloopError(error.code, error.message, { retryable: error.retryable, details: error.details });
}
