import { describe, expect, it } from "vitest";
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey } from "./api-key-secret";

describe("api key secrets", () => {
  it("makes distinct wl_ keys of 32 random bytes", () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).toMatch(/^wl_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });

  it("hashes to sha256 hex and shows only a short prefix", () => {
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(hashApiKey("wl_abc")).not.toBe(hashApiKey("wl_abd"));
    const key = generateApiKey();
    expect(apiKeyDisplayPrefix(key)).toBe(key.slice(0, 11));
  });
});
