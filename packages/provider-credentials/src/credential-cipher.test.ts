import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CredentialCipher } from "./credential-cipher";

const key = (id: string) => ({ id, key: randomBytes(32) });

describe("CredentialCipher", () => {
  it("seals with the first key and opens what it sealed", () => {
    const cipher = new CredentialCipher([key("k1")]);
    const sealed = cipher.seal("sk-secret", "t1/openai");
    expect(sealed.keyId).toBe("k1");
    expect(sealed.sealed.includes(Buffer.from("sk-secret"))).toBe(false);
    expect(cipher.open(sealed, "t1/openai")).toBe("sk-secret");
  });

  it("uses a fresh iv each time", () => {
    const cipher = new CredentialCipher([key("k1")]);
    expect(cipher.seal("same", "c").sealed.equals(cipher.seal("same", "c").sealed)).toBe(false);
  });

  it("opens values sealed under an older key after rotation", () => {
    const old = key("old");
    const sealed = new CredentialCipher([old]).seal("sk-secret", "c");
    const rotated = new CredentialCipher([key("new"), old]);
    expect(rotated.open(sealed, "c")).toBe("sk-secret");
    expect(rotated.seal("sk-secret", "c").keyId).toBe("new");
  });

  it("refuses a value moved to another context, a tampered value and an unknown key", () => {
    const cipher = new CredentialCipher([key("k1")]);
    const sealed = cipher.seal("sk-secret", "tenant-a/openai");
    const unreadable = expect.objectContaining({ code: "provider_credential_unreadable" });
    expect(() => cipher.open(sealed, "tenant-b/openai")).toThrow(unreadable);
    const tampered = Buffer.from(sealed.sealed);
    tampered[tampered.length - 1] = (tampered.at(-1) ?? 0) ^ 1;
    expect(() => cipher.open({ keyId: "k1", sealed: tampered }, "tenant-a/openai")).toThrow(unreadable);
    expect(() => cipher.open({ ...sealed, keyId: "gone" }, "tenant-a/openai")).toThrow(unreadable);
  });

  it("seals nothing when the operator configured no key", () => {
    const cipher = new CredentialCipher([]);
    expect(cipher.enabled).toBe(false);
    expect(() => cipher.seal("sk", "c")).toThrow(
      expect.objectContaining({ code: "provider_credentials_disabled" }),
    );
  });
});
