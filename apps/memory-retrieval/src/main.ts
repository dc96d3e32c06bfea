import { memoryLimits, runService } from "@wakeloop/service-kit";
import { loadConfig } from "./config";
import { startEventIndexer } from "./event-indexer";
import { startMemoryServer } from "./memory-server";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "memory-retrieval",
  config: loadConfig(),
  start: async ({ config, bus, db, tracer, log }) => {
    const indexer = await startEventIndexer({ db, bus, log, concurrency: config.INDEX_CONCURRENCY });
    const server = startMemoryServer({
      bus,
      db,
      tracer,
      log,
      replicaId: config.MEMORY_REPLICA_ID,
      limits: memoryLimits(config),
    });
    return {
      stop: async () => {
        await Promise.all([server.stop(), indexer.stop()]);
      },
    };
  },
});
