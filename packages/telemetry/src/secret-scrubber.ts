/**
 * Removes secrets from text that leaves the process as logs or spans. Two nets: the exact values the
 * process was configured with (provider keys, passwords; it knows them, so it can always find them),
 * and the shapes of keys it is never configured with but may see in passing (a Wakeloop API key in an
 * error message, a provider key echoed back in a provider's error body).
 */
export type Scrub = (text: string) => string;

export const REDACTED = "[redacted]";

/** Shorter values are too likely to occur in ordinary text to be replaced wherever they appear. */
const MIN_SECRET_LENGTH = 8;

/**
 * Wakeloop API keys (`wl_` + 32 bytes base64url, apps/gateway auth) and the key formats of the hosted
 * providers (`sk-…`, `sk-ant-…`). Anchored on both sides so ids that merely contain `wl_` are kept.
 */
const KEY_SHAPES = /(?<![A-Za-z0-9_-])(?:wl_[A-Za-z0-9_-]{43}|sk-[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_-])/g;

export function createSecretScrubber(secrets: readonly string[] = []): Scrub {
  const known = [...new Set(secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH))]
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  return (text) => {
    let scrubbed = text;
    for (const secret of known) {
      if (scrubbed.includes(secret)) scrubbed = scrubbed.replaceAll(secret, REDACTED);
    }
    return scrubbed.replace(KEY_SHAPES, REDACTED);
  };
}
