import { hostname } from "node:os";
import { MemoryLimitsEnv, parseConfig, serviceEnv } from "@wakeloop/service-kit";
import { z } from "zod";

/**
 * Memory retrieval settings: the shared ones (Postgres, NATS, telemetry, health port) come from
 * serviceEnv (health and metrics ports too), the store limits from MemoryLimitsEnv (the gateway reads the same ones).
 */
export const MemoryRetrievalEnv = serviceEnv({ healthPort: 9084, metricsPort: 9468 })
  .extend(MemoryLimitsEnv.shape)
  .extend({
    MEMORY_REPLICA_ID: z
      .string()
      .min(1)
      .max(64)
      .default(`${hostname()}-${process.pid}`)
      .describe("Names this replica in ping answers and logs; replicas share no state, so any id works"),
    INDEX_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_024)
      .default(256)
      .describe(
        "Committed events this replica holds at once per consumer, across the batches it collects and inserts",
      ),
    INDEX_BATCH_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000)
      .default(10)
      .describe(
        "How long a batch of committed events waits for more once its first arrived; each batch is indexed in one statement",
      ),
    EMBEDDINGS_BASE_URL: z
      .string()
      .url()
      .optional()
      .describe(
        "OpenAI-compatible embeddings API base (e.g. https://api.openai.com/v1); unset: full-text search only",
      ),
    EMBEDDINGS_MODEL: z
      .string()
      .min(1)
      .default("text-embedding-3-small")
      .describe("Model asked for vectors; changing it queues everything to be embedded again"),
    EMBEDDINGS_API_KEY: z
      .string()
      .min(1)
      .optional()
      .describe("Bearer key of the embeddings endpoint (kept out of logs like the provider keys)"),
    EMBEDDINGS_DIMENSIONS: z.coerce
      .number()
      .int()
      .min(8)
      .max(4_096)
      .optional()
      .describe("Sent as `dimensions` to models that can shorten their vectors; unset: the model's own"),
    EMBEDDINGS_BATCH_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(512)
      .default(64)
      .describe("Texts per embeddings request of the background embedder"),
    EMBEDDINGS_POLL_MS: z.coerce
      .number()
      .int()
      .min(10)
      .max(60_000)
      .default(250)
      .describe("How often an idle embedder looks for newly indexed events and memory entries"),
    EMBEDDINGS_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(120_000)
      .default(10_000)
      .describe(
        "One embeddings request, before the SDK's retries; a search waits for its query's vector this long at most",
      ),
    EMBEDDINGS_WINDOW: z.coerce
      .number()
      .int()
      .min(0)
      .max(20_000)
      .default(1_000)
      .describe(
        "Newest vectors of each kind (events, memory) a hybrid search ranks besides its full-text candidates",
      ),
    EMBEDDINGS_CACHE_MB: z.coerce
      .number()
      .int()
      .min(0)
      .max(16_384)
      .default(64)
      .describe(
        "Memory for stored vectors this replica has read, so a hybrid search reads only new ones; 0: none",
      ),
    EMBEDDINGS_MIN_SIMILARITY: z.coerce
      .number()
      .min(-1)
      .max(1)
      .default(0.25)
      .describe("Cosine similarity below which a vector neighbour is not a hit; depends on the model"),
  });
export type MemoryRetrievalConfig = z.output<typeof MemoryRetrievalEnv>;

/** The embeddings endpoint, or null when none is configured (full-text search only). */
export function embeddingsSettings(config: MemoryRetrievalConfig) {
  if (config.EMBEDDINGS_BASE_URL === undefined) return null;
  return {
    baseUrl: config.EMBEDDINGS_BASE_URL,
    model: config.EMBEDDINGS_MODEL,
    apiKey: config.EMBEDDINGS_API_KEY,
    dimensions: config.EMBEDDINGS_DIMENSIONS,
    timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
  };
}

export function loadConfig(): MemoryRetrievalConfig {
  return parseConfig(MemoryRetrievalEnv, process.env);
}
