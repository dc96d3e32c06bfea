import { createHash } from "node:crypto";
import type { CredentialProvider, ModelConfig } from "@wakeloop/contracts";
import type { Database } from "@wakeloop/db";
import type { Fetch } from "@wakeloop/egress";
import {
  createModelClient,
  type ModelClient,
  type ModelEndpointPolicy,
  modelApiKey,
} from "@wakeloop/model-providers";
import { type CredentialCipher, readProviderCredential } from "@wakeloop/provider-credentials";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";

/** The client for one model request of a tenant's session; throws a WakeloopError naming the rule. */
export type ModelClients = (tenantId: string, model: ModelConfig) => Promise<ModelClient>;

export interface ModelClientsOptions {
  db: Kysely<Database>;
  policy: ModelEndpointPolicy;
  /** The platform's keys, by provider, as the operator configured them. */
  platformKeys: Partial<Record<CredentialProvider, string>>;
  credentials: CredentialCipher;
  /** The egress guard every model request goes through. */
  fetch: Fetch;
  timeoutMs: number;
  /** SDK clients kept for reuse; past it the least recently used is dropped (made again when asked). */
  maxClients: number;
}

/**
 * Picks the key and applies the endpoint rules each time it is asked (once per wake: an agent version
 * saved under older rules, a credential added or deleted since, all count from the next wake), then
 * reuses one SDK client per provider, base URL and key. Keys are cached by hash, never in clear. The
 * cache is bounded: tenants choose base URLs and keys, so a worker that kept every client it ever made
 * would grow with each new one, for its whole life.
 */
export function modelClients(options: ModelClientsOptions): ModelClients {
  const clients = new LRUCache<string, ModelClient>({ max: options.maxClients });
  return async (tenantId, model) => {
    const tenant = options.credentials.enabled
      ? await readProviderCredential(options.db, options.credentials, tenantId, model.provider)
      : undefined;
    const apiKey = modelApiKey(options.policy, model, {
      tenant,
      platform: options.platformKeys[model.provider],
    });
    const keyHash = apiKey === undefined ? "" : createHash("sha256").update(apiKey).digest("hex");
    const cacheKey = `${model.provider}|${model.base_url ?? ""}|${keyHash}`;
    let client = clients.get(cacheKey);
    if (client === undefined) {
      client = createModelClient(model, { apiKey, timeoutMs: options.timeoutMs, fetch: options.fetch });
      clients.set(cacheKey, client);
    }
    return client;
  };
}
