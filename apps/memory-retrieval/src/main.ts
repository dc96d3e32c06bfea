import { memoryLimits, runService } from "@wakeloop/service-kit";
import { embeddingsSettings, loadConfig } from "./config";
import { startEmbedder } from "./embedder";
import { createEmbeddingsClient } from "./embeddings-client";
import { startEventIndexer } from "./event-indexer";
import { startMemoryServer } from "./memory-server";
import { createVectorCache } from "./vector-cache";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "memory-retrieval",
  config: loadConfig(),
  start: async ({ config, bus, db, tracer, log }) => {
    const settings = embeddingsSettings(config);
    const embeddings = settings === null ? null : createEmbeddingsClient(settings);
    const indexer = await startEventIndexer({
      db,
      bus,
      log,
      concurrency: config.INDEX_CONCURRENCY,
      batchIntervalMs: config.INDEX_BATCH_INTERVAL_MS,
    });
    const embedder = await startEmbedder({
      db,
      log,
      embeddings,
      batchSize: config.EMBEDDINGS_BATCH_SIZE,
      pollMs: config.EMBEDDINGS_POLL_MS,
    });
    const server = startMemoryServer({
      bus,
      db,
      tracer,
      log,
      replicaId: config.MEMORY_REPLICA_ID,
      limits: memoryLimits(config),
      search: {
        embeddings,
        vectorWindow: config.EMBEDDINGS_WINDOW,
        minSimilarity: config.EMBEDDINGS_MIN_SIMILARITY,
        vectorCache: createVectorCache(config.EMBEDDINGS_CACHE_MB * 1024 * 1024),
      },
    });
    return {
      stop: async () => {
        await Promise.all([server.stop(), indexer.stop(), embedder.stop()]);
      },
    };
  },
});
