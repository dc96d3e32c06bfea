import { WakeloopError } from "@wakeloop/contracts";

export interface StreamSlots {
  /** Takes one of the key's stream slots; call the returned function when the stream ends. */
  acquire(keyId: string): () => void;
}

/** A full key may retry once one of its streams ends; a client should not spin on it. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Open event streams per API key, in this gateway process: each stream holds a NATS subscription, a
 * socket and periodic Postgres reads, so one key must not open them without bound. Like the request
 * rate, the count is per replica (a key may hold `replicas × max` streams in all).
 */
export function createStreamSlots(maxPerKey: number): StreamSlots {
  const open = new Map<string, number>();
  return {
    acquire(keyId) {
      const held = open.get(keyId) ?? 0;
      if (held >= maxPerKey) {
        throw new WakeloopError(
          "quota_exceeded",
          `this API key already has ${held} open event streams, the most allowed; close one first`,
          { details: { limit: maxPerKey, retry_after_seconds: RETRY_AFTER_SECONDS } },
        );
      }
      open.set(keyId, held + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(keyId) ?? 1) - 1;
        if (left === 0) open.delete(keyId);
        else open.set(keyId, left);
      };
    },
  };
}
