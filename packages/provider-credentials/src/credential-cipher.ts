import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { WakeloopError } from "@wakeloop/contracts";

/** One operator key: 32 bytes for AES-256-GCM, and the id stored next to what it sealed. */
export interface CredentialKey {
  id: string;
  key: Buffer;
}

export interface SealedSecret {
  keyId: string;
  /** iv (12 bytes) | auth tag (16 bytes) | ciphertext. */
  sealed: Buffer;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets with the first operator key and opens them with whichever key sealed them, so an
 * operator rotates by putting a new key first and keeping the old one until every row was rewritten.
 * `context` is authenticated with the value (tenant and provider), so a sealed value copied into
 * another tenant's row does not open.
 */
export class CredentialCipher {
  private readonly keys: ReadonlyMap<string, Buffer>;

  constructor(private readonly ordered: readonly CredentialKey[]) {
    this.keys = new Map(ordered.map(({ id, key }) => [id, key]));
  }

  get enabled(): boolean {
    return this.ordered.length > 0;
  }

  seal(plaintext: string, context: string): SealedSecret {
    const active = this.ordered[0];
    if (active === undefined) {
      throw new WakeloopError(
        "provider_credentials_disabled",
        "provider credentials are not enabled on this platform: the operator has not set PROVIDER_CREDENTIAL_KEYS",
      );
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", active.key, iv);
    cipher.setAAD(Buffer.from(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return { keyId: active.id, sealed: Buffer.concat([iv, cipher.getAuthTag(), ciphertext]) };
  }

  open({ keyId, sealed }: SealedSecret, context: string): string {
    const key = this.keys.get(keyId);
    if (key === undefined) throw unreadable(`it was sealed with key ${keyId}, which is not configured`);
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch (cause) {
      throw unreadable("it does not authenticate under its key", cause);
    }
  }
}

function unreadable(why: string, cause?: unknown): WakeloopError {
  return new WakeloopError(
    "provider_credential_unreadable",
    `the stored provider credential cannot be read: ${why}`,
    {
      cause,
    },
  );
}
