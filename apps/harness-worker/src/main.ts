import { ensureStreams } from "@wakeloop/bus";
import { poolStats } from "@wakeloop/db";
import { createGuardedFetch } from "@wakeloop/egress";
import { CredentialCipher } from "@wakeloop/provider-credentials";
import { createSandboxClient } from "@wakeloop/sandbox-client";
import { runService } from "@wakeloop/service-kit";
import { loadConfig } from "./config";
import { modelClients } from "./model/model-clients";
import { pullGate } from "./pull-gate";
import { HistoryCache } from "./session/history-cache";
import { startWorker } from "./worker";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "harness-worker",
  config: loadConfig(),
  start: async ({ db, bus, log, tracer, config }) => {
    await ensureStreams(bus.jsm, bus.catalog);
    const egress = { allowedHosts: config.EGRESS_ALLOWED_HOSTS };
    return startWorker({
      db,
      bus,
      log,
      tracer,
      limits: {
        slots: config.WORKER_SLOTS,
        mayPull: pullGate({
          maxRssBytes: config.WORKER_MAX_RSS_MB * 2 ** 20,
          maxDbWaiters: config.WORKER_MAX_DB_WAITERS,
          rssBytes: () => process.memoryUsage.rss(),
          dbWaiters: () => poolStats(db).waiting,
          log,
        }),
      },
      histories: new HistoryCache(config.HISTORY_CACHE_EVENTS),
      sandbox: config.SANDBOX_ENABLED ? createSandboxClient(bus) : null,
      models: modelClients({
        db,
        policy: {
          egress,
          baseUrlHosts: config.MODEL_BASE_URL_ALLOWED_HOSTS,
          compatibleKeyHosts: config.OPENAI_COMPATIBLE_KEY_HOSTS,
        },
        platformKeys: {
          anthropic: config.ANTHROPIC_API_KEY,
          openai: config.OPENAI_API_KEY,
          openai_compatible: config.OPENAI_COMPATIBLE_API_KEY,
        },
        credentials: new CredentialCipher(config.PROVIDER_CREDENTIAL_KEYS),
        // Provider keys ride in headers, so redirects are refused rather than followed.
        fetch: createGuardedFetch({
          policy: egress,
          maxResponseBytes: config.EGRESS_MAX_RESPONSE_BYTES,
          timeoutMs: config.MODEL_TIMEOUT_MS,
          followRedirects: false,
        }),
        timeoutMs: config.MODEL_TIMEOUT_MS,
      }),
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
