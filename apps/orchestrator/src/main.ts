import { createSandboxClient } from "@wakeloop/sandbox-client";
import { runService } from "@wakeloop/service-kit";
import { loadConfig } from "./config";
import { startOrchestrator } from "./orchestrator";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "orchestrator",
  config: loadConfig(),
  start: async ({ db, bus, log, meter, config }) =>
    startOrchestrator({
      db,
      bus,
      log,
      meter,
      sandbox: config.SANDBOX_ENABLED ? createSandboxClient(bus) : null,
      config,
    }),
});
