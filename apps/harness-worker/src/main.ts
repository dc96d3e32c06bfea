import { ensureStreams } from "@wakeloop/bus";
import { createModelClient } from "@wakeloop/model-providers";
import { createSandboxClient } from "@wakeloop/sandbox-client";
import { runService } from "@wakeloop/service-kit";
import { loadConfig } from "./config";
import { cachedModelClients } from "./model/model-clients";
import { startWorker } from "./worker";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "harness-worker",
  config: loadConfig(),
  start: async ({ db, bus, log, tracer, config }) => {
    await ensureStreams(bus.jsm, bus.catalog);
    const apiKeys = {
      anthropic: config.ANTHROPIC_API_KEY,
      openai: config.OPENAI_API_KEY,
      openai_compatible: config.OPENAI_COMPATIBLE_API_KEY,
    };
    return startWorker({
      db,
      bus,
      log,
      tracer,
      slots: config.WORKER_SLOTS,
      sandbox: config.SANDBOX_ENABLED ? createSandboxClient(bus) : null,
      models: cachedModelClients((model) =>
        createModelClient(model, { apiKey: apiKeys[model.provider], timeoutMs: config.MODEL_TIMEOUT_MS }),
      ),
      settings: {
        workerId: config.WORKER_ID,
        leaseTtlMs: config.LEASE_TTL_MS,
        maxModelRequestsPerWake: config.MAX_MODEL_REQUESTS_PER_WAKE,
        retry: {
          maxRetries: config.MODEL_MAX_RETRIES,
          baseDelayMs: config.MODEL_RETRY_BASE_MS,
          maxDelayMs: config.MODEL_RETRY_MAX_MS,
          random: Math.random,
        },
        globalToolPolicy: config.GLOBAL_TOOL_POLICY,
        maxSubSessionDepth: config.MAX_SUBSESSION_DEPTH,
      },
    });
  },
});
