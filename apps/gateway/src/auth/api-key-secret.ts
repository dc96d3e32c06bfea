import { createHash, randomBytes } from "node:crypto";

const SCHEME = "wl_";
/** Enough of the key for a person to tell keys apart in a list, far too little to guess the rest. */
const DISPLAY_PREFIX_LENGTH = SCHEME.length + 8;

/** A new secret: `wl_` and 32 random bytes as base64url. */
export function generateApiKey(): string {
  return `${SCHEME}${randomBytes(32).toString("base64url")}`;
}

/** What the database stores instead of the key (invariant 9): its sha256 as hex. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function apiKeyDisplayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}
