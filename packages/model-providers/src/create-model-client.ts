import { type ModelConfig, WakeloopError } from "@wakeloop/contracts";
import type { Fetch } from "@wakeloop/egress";
import { createAnthropicClient } from "./anthropic-client";
import type { ModelClient } from "./model-client";
import { createOpenAIClient } from "./openai-client";

export interface ModelCredentials {
  /** Required for `anthropic` and `openai`; local OpenAI-compatible servers usually need none. */
  apiKey?: string;
  timeoutMs?: number;
  /** Every request of the client goes through it: the harness passes the egress guard's fetch. */
  fetch?: Fetch;
}

/** The compatible servers we target ignore the key, but the SDK insists on having one. */
const PLACEHOLDER_KEY = "unused";

/** Chooses the adapter for an agent's model configuration. */
export function createModelClient(config: ModelConfig, credentials: ModelCredentials = {}): ModelClient {
  const { apiKey, timeoutMs, fetch } = credentials;
  const shared = {
    ...(config.base_url !== undefined && { baseURL: config.base_url }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(fetch !== undefined && { fetch }),
  };
  if (config.provider === "openai_compatible") {
    return createOpenAIClient({
      ...shared,
      apiKey: apiKey ?? PLACEHOLDER_KEY,
      maxTokensField: "max_tokens",
      promptCacheKey: false,
    });
  }
  if (apiKey === undefined || apiKey === "") {
    throw new WakeloopError(
      "model_credentials_missing",
      `no key for provider ${config.provider}: the tenant stored no provider credential and the platform has no key`,
    );
  }
  return config.provider === "anthropic"
    ? createAnthropicClient({ ...shared, apiKey })
    : createOpenAIClient({ ...shared, apiKey });
}
