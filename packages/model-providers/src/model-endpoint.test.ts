import type { ModelConfig } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { checkModelEndpoint, type ModelEndpointPolicy, modelApiKey } from "./model-endpoint";

const policy: ModelEndpointPolicy = {
  egress: { allowedHosts: ["127.0.0.1"] },
  baseUrlHosts: ["llm-proxy.corp.example"],
  compatibleKeyHosts: ["vllm.corp.example"],
};

const model = (provider: ModelConfig["provider"], base_url?: string): ModelConfig => ({
  provider,
  id: "m",
  ...(base_url !== undefined && { base_url }),
  max_output_tokens: 100,
  context_window_tokens: 1_000,
});

describe("checkModelEndpoint", () => {
  it("refuses a hosted provider's base_url on a host the operator did not list, naming the rule", () => {
    for (const provider of ["anthropic", "openai"] as const) {
      expect(() =>
        checkModelEndpoint(policy, model(provider, "https://collector.attacker.example/v1")),
      ).toThrow(
        expect.objectContaining({
          code: "model_base_url_refused",
          message: expect.stringContaining("MODEL_BASE_URL_ALLOWED_HOSTS"),
        }),
      );
    }
  });

  it("lets hosted providers use their own API or a listed host", () => {
    expect(() => checkModelEndpoint(policy, model("anthropic"))).not.toThrow();
    expect(() =>
      checkModelEndpoint(policy, model("openai", "https://LLM-proxy.corp.example/v1")),
    ).not.toThrow();
  });

  it("refuses internal literals for every provider unless egress allows them", () => {
    expect(() => checkModelEndpoint(policy, model("openai_compatible", "http://169.254.169.254/v1"))).toThrow(
      expect.objectContaining({ code: "egress_refused" }),
    );
    expect(() =>
      checkModelEndpoint(policy, model("openai_compatible", "http://127.0.0.1:4010/v1")),
    ).not.toThrow();
  });
});

describe("modelApiKey", () => {
  const keys = { platform: "platform-key" };

  it("sends the platform key to hosted providers' own or listed hosts", () => {
    expect(modelApiKey(policy, model("anthropic"), keys)).toBe("platform-key");
    expect(modelApiKey(policy, model("openai", "https://llm-proxy.corp.example/v1"), keys)).toBe(
      "platform-key",
    );
  });

  it("sends the compatible-server key only to listed hosts", () => {
    expect(modelApiKey(policy, model("openai_compatible", "https://vllm.corp.example/v1"), keys)).toBe(
      "platform-key",
    );
    expect(
      modelApiKey(policy, model("openai_compatible", "https://tenant-server.example/v1"), keys),
    ).toBeUndefined();
    expect(modelApiKey(policy, model("openai_compatible", "http://127.0.0.1:4010/v1"), keys)).toBeUndefined();
  });

  it("prefers the tenant's credential, which may go to the tenant's own compatible server", () => {
    const withTenant = { ...keys, tenant: "tenant-key" };
    expect(
      modelApiKey(policy, model("openai_compatible", "https://tenant-server.example/v1"), withTenant),
    ).toBe("tenant-key");
    expect(modelApiKey(policy, model("anthropic"), withTenant)).toBe("tenant-key");
  });

  it("never hands out a key for an endpoint that is refused", () => {
    expect(() =>
      modelApiKey(policy, model("anthropic", "https://collector.attacker.example"), { tenant: "tenant-key" }),
    ).toThrow(expect.objectContaining({ code: "model_base_url_refused" }));
  });
});
