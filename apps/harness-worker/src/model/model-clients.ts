import type { ModelConfig } from "@wakeloop/contracts";
import type { ModelClient } from "@wakeloop/model-providers";

/** One SDK client per distinct model configuration, kept for the life of the worker. */
export function cachedModelClients(
  create: (model: ModelConfig) => ModelClient,
): (model: ModelConfig) => ModelClient {
  const clients = new Map<string, ModelClient>();
  return (model) => {
    const key = `${model.provider}|${model.base_url ?? ""}`;
    let client = clients.get(key);
    if (client === undefined) {
      client = create(model);
      clients.set(key, client);
    }
    return client;
  };
}
