import { describe, expect, it } from "vitest";
import { configSecrets } from "./config-secrets";

describe("configSecrets", () => {
  it("collects credential-named settings and passwords inside URL settings", () => {
    const secrets = configSecrets({
      DATABASE_URL: "postgres://app:p%40ss-word@db:5432/wakeloop",
      NATS_URL: ["nats://gateway:nats-pass@n1:4222", "nats://n2:4222"],
      OPENAI_API_KEY: "sk-platform",
      NATS_NKEY_SEED: "SUAseed",
      CREDENTIALS_KEY: "base64key",
      LOG_LEVEL: "info",
      WORKER_SLOTS: 4,
      ANTHROPIC_API_KEY: undefined,
    });
    expect(secrets.sort()).toEqual(["SUAseed", "base64key", "nats-pass", "p@ss-word", "sk-platform"]);
  });

  it("finds nothing in a configuration without credentials", () => {
    expect(configSecrets({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/x", PORT: 8080 })).toEqual([]);
  });
});
