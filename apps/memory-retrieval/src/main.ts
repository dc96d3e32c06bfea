import { runService } from "@wakeloop/service-kit";
import { loadConfig } from "./config";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "memory-retrieval",
  config: loadConfig(),
  start: async () => ({ stop: async () => {} }),
});
