import type { ModelConfig } from "@wakeloop/contracts";
import { createGuardedFetch } from "@wakeloop/egress";
import { type FakeModelServer, startFakeModelServer } from "@wakeloop/fake-model";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createModelClient } from "./create-model-client";
import type { ModelRequest } from "./model-client";

let fake: FakeModelServer;
beforeEach(async () => {
  fake = await startFakeModelServer();
});
afterEach(async () => {
  await fake.close();
});

const config = (provider: ModelConfig["provider"], baseUrl: string): ModelConfig => ({
  provider,
  id: "fake-model",
  base_url: baseUrl,
  max_output_tokens: 100,
  context_window_tokens: 10_000,
});

const request: ModelRequest = {
  model: "fake-model",
  system: "",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  maxOutputTokens: 100,
};

describe("createModelClient", () => {
  it("talks the Messages API for anthropic", async () => {
    const client = createModelClient(config("anthropic", fake.url), { apiKey: "k" });
    expect(client.provider).toBe("anthropic");
    await client.complete(request);
    expect(fake.requests[0]?.path).toBe("/v1/messages");
  });

  it("talks Chat Completions with max_completion_tokens and prompt_cache_key for openai", async () => {
    const client = createModelClient(config("openai", `${fake.url}/v1`), { apiKey: "k" });
    expect(client.provider).toBe("openai");
    await client.complete({ ...request, cache: { key: "sesn_1", ttl: "5m" } });
    expect(fake.requests[0]?.path).toBe("/v1/chat/completions");
    expect(fake.requests[0]?.body).toMatchObject({ max_completion_tokens: 100, prompt_cache_key: "sesn_1" });
  });

  it("needs no key for a compatible server and sends max_tokens, and no field it may not know", async () => {
    const client = createModelClient(config("openai_compatible", `${fake.url}/v1`));
    expect((await client.complete({ ...request, cache: { key: "sesn_1", ttl: "5m" } })).text).toBe("ok");
    expect(fake.requests[0]?.body).toMatchObject({ max_tokens: 100 });
    expect(fake.requests[0]?.body).not.toHaveProperty("max_completion_tokens");
    expect(fake.requests[0]?.body).not.toHaveProperty("prompt_cache_key");
  });

  it("refuses a hosted provider without a key", () => {
    expect(() => createModelClient(config("anthropic", fake.url))).toThrow(
      expect.objectContaining({ code: "model_credentials_missing", retryable: false }),
    );
  });
});

describe("createModelClient through the egress guard", () => {
  const guarded = (allowedHosts: string[]) =>
    createGuardedFetch({
      policy: { allowedHosts },
      maxResponseBytes: 1_000_000,
      timeoutMs: 10_000,
      followRedirects: false,
    });

  it("never reaches a loopback server the operator did not allow, and says why", async () => {
    for (const provider of ["anthropic", "openai_compatible"] as const) {
      const base = provider === "anthropic" ? fake.url : `${fake.url}/v1`;
      const client = createModelClient(config(provider, base), { apiKey: "k", fetch: guarded([]) });
      await expect(client.complete(request)).rejects.toMatchObject({
        code: "model_egress_refused",
        retryable: false,
        message: expect.stringMatching(/127\.0\.0\.1 is refused: loopback addresses/),
      });
    }
    expect(fake.requests).toHaveLength(0);
  });

  it("streams from a server the operator allowed", async () => {
    const client = createModelClient(config("openai_compatible", `${fake.url}/v1`), {
      fetch: guarded(["127.0.0.1"]),
    });
    expect((await client.complete(request)).text).toBe("ok");
  });
});
