import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkConfig } from "./parse-config";
import { ProviderSettingsEnv } from "./provider-settings-env";

describe("ProviderSettingsEnv", () => {
  it("defaults to no allowed hosts and no credential keys", () => {
    const parsed = ProviderSettingsEnv.parse({});
    expect(parsed).toMatchObject({
      EGRESS_ALLOWED_HOSTS: [],
      MODEL_BASE_URL_ALLOWED_HOSTS: [],
      OPENAI_COMPATIBLE_KEY_HOSTS: [],
      PROVIDER_CREDENTIAL_KEYS: [],
    });
  });

  it("splits host lists and reads keys in order, the first one active", () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const parsed = ProviderSettingsEnv.parse({
      EGRESS_ALLOWED_HOSTS: " 127.0.0.1, vllm.internal ,",
      PROVIDER_CREDENTIAL_KEYS: `k2:${b.toString("base64")},k1:${a.toString("base64")}`,
    });
    expect(parsed.EGRESS_ALLOWED_HOSTS).toEqual(["127.0.0.1", "vllm.internal"]);
    expect(parsed.PROVIDER_CREDENTIAL_KEYS).toEqual([
      { id: "k2", key: b },
      { id: "k1", key: a },
    ]);
  });

  it("refuses a key that is not 32 bytes without echoing it", () => {
    const secret = Buffer.from("too short").toString("base64");
    const result = checkConfig(ProviderSettingsEnv, { PROVIDER_CREDENTIAL_KEYS: `k1:${secret}` });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems;
    expect(problems.join("\n")).toMatch(/PROVIDER_CREDENTIAL_KEYS: entry 1 is not <id>:<base64 of 32 bytes>/);
    expect(problems.join("\n")).not.toContain(secret);
  });

  it("refuses two keys with one id: a stored key id must name exactly one key", () => {
    const entry = `k1:${randomBytes(32).toString("base64")}`;
    const result = checkConfig(ProviderSettingsEnv, { PROVIDER_CREDENTIAL_KEYS: `${entry},${entry}` });
    expect(result.ok ? [] : result.problems).toEqual([expect.stringMatching(/entry 2 is not/)]);
  });
});
