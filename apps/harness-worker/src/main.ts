import { ensureStreams } from "@wakeloop/bus";
import { agentSqlRunnerUrl, createAgentSqlPool, poolStats } from "@wakeloop/db";
import { createGuardedFetch } from "@wakeloop/egress";
import { createMemoryClient } from "@wakeloop/memory-client";
import { CredentialCipher } from "@wakeloop/provider-credentials";
import { createSandboxClient } from "@wakeloop/sandbox-client";
import { runService } from "@wakeloop/service-kit";
import { loadConfig } from "./config";
import { modelClients } from "./model/model-clients";
import { pullGate } from "./pull-gate";
import { HistoryCache } from "./session/history-cache";
import { webSearch } from "./tools/web-search";
import { createWakeMetrics } from "./wake-metrics";
import { startWorker } from "./worker";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "harness-worker",
  config: loadConfig(),
  start: async ({ db, bus, log, tracer, meter, config }) => {
    await ensureStreams(bus.jsm, bus.catalog);
    const egress = { allowedHosts: config.EGRESS_ALLOWED_HOSTS };
    const credentials = new CredentialCipher(config.PROVIDER_CREDENTIAL_KEYS);
    const agentSql = createAgentSqlPool({
      url: config.AGENT_SQL_DATABASE_URL ?? agentSqlRunnerUrl(config.DATABASE_URL),
      max: config.AGENT_SQL_POOL_MAX,
    });
    const worker = startWorker({
      db,
      bus,
      log,
      tracer,
      metrics: createWakeMetrics(meter),
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
      memory: createMemoryClient(bus, {
        timeoutMs: config.MEMORY_TIMEOUT_MS,
        retryForMs: config.MEMORY_RETRY_MS,
      }),
      web: {
        fetch: createGuardedFetch({
          policy: { allowedHosts: config.WEB_FETCH_ALLOWED_HOSTS },
          maxResponseBytes: config.WEB_FETCH_MAX_BYTES,
          timeoutMs: config.WEB_FETCH_TIMEOUT_MS,
          followRedirects: true,
        }),
        search: config.WEB_SEARCH_URL === undefined ? null : webSearch(config.WEB_SEARCH_URL, config),
        maxChars: config.WEB_FETCH_MAX_CHARS,
      },
      mcp: {
        db,
        cipher: credentials,
        // Requests carry vault credentials in headers, so redirects are refused rather than followed.
        fetch: createGuardedFetch({
          policy: { allowedHosts: config.MCP_ALLOWED_HOSTS },
          maxResponseBytes: config.MCP_MAX_RESPONSE_BYTES,
          timeoutMs: config.MCP_MAX_CALL_MS,
          followRedirects: false,
        }),
        listTimeoutMs: config.MCP_LIST_TIMEOUT_MS,
      },
      agentSql,
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
        credentials,
        // Provider keys ride in headers, so redirects are refused rather than followed.
        fetch: createGuardedFetch({
          policy: egress,
          maxResponseBytes: config.EGRESS_MAX_RESPONSE_BYTES,
          timeoutMs: config.MODEL_TIMEOUT_MS,
          followRedirects: false,
        }),
        timeoutMs: config.MODEL_TIMEOUT_MS,
        maxClients: config.MODEL_CLIENT_CACHE_SIZE,
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
        maxChildrenPerSession: config.MAX_CHILDREN_PER_SESSION,
        maxScheduledTasksPerAgent: config.MAX_SCHEDULED_TASKS_PER_AGENT,
        maxRemindersPerSession: config.MAX_REMINDERS_PER_SESSION,
        webSearch: config.WEB_SEARCH_URL !== undefined,
        browserImages: config.SANDBOX_BROWSER_IMAGES,
        agentSql: {
          statementTimeoutMs: config.AGENT_SQL_STATEMENT_TIMEOUT_MS,
          maxRows: config.AGENT_SQL_MAX_ROWS,
          quotaBytes: config.AGENT_SQL_QUOTA_MB * 2 ** 20,
          maxObjects: config.AGENT_SQL_MAX_OBJECTS,
        },
        llmModels: {
          ...(config.LLM_MODEL_LOW && { low: config.LLM_MODEL_LOW }),
          ...(config.LLM_MODEL_MEDIUM && { medium: config.LLM_MODEL_MEDIUM }),
          ...(config.LLM_MODEL_HIGH && { high: config.LLM_MODEL_HIGH }),
        },
        recall: {
          maxTokens: config.MEMORY_RECALL_TOKENS,
          maxHits: config.MEMORY_RECALL_HITS,
          timeoutMs: config.MEMORY_CONTEXT_TIMEOUT_MS,
        },
        promptCache: config.MODEL_PROMPT_CACHE === "off" ? null : config.MODEL_PROMPT_CACHE,
        prices: config.MODEL_PRICES,
      },
    });
    return {
      isReady: worker.isReady,
      async stop() {
        await worker.stop();
        await agentSql.end();
      },
    };
  },
});
