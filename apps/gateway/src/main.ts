import { agentSqlDatabaseUrl, createAgentSqlPool } from "@wakeloop/db";
import { memoryLimits, runService, sandboxLimits, substrateLimits } from "@wakeloop/service-kit";
import { loadConfig } from "./config";
import { createGatewayServer } from "./server";

// Wiring only (STYLE §8): behaviour modules are started here and stopped by the returned stoppable.
await runService({
  name: "gateway",
  config: loadConfig(),
  start: async ({ config, log, db, bus, meter }) => {
    const agentSql = createAgentSqlPool({
      url: config.AGENT_SQL_ADMIN_URL ?? agentSqlDatabaseUrl(config.DATABASE_URL),
      max: 2,
    });
    const api = createGatewayServer({
      db,
      agentSql,
      bus,
      log,
      meter,
      config: {
        bodyLimitBytes: config.GATEWAY_BODY_LIMIT_BYTES,
        discardBytes: config.GATEWAY_BODY_DISCARD_BYTES,
        sseKeepAliveMs: config.GATEWAY_SSE_KEEPALIVE_MS,
        quotas: {
          requestRate: {
            requests: config.GATEWAY_RATE_LIMIT_REQUESTS,
            windowSeconds: config.GATEWAY_RATE_LIMIT_WINDOW_S,
          },
          streamsPerKey: config.GATEWAY_MAX_STREAMS_PER_KEY,
          openSessionsPerTenant: config.GATEWAY_MAX_OPEN_SESSIONS_PER_TENANT,
          budgets: {
            defaultTokens: config.GATEWAY_DEFAULT_BUDGET_TOKENS ?? null,
            maxTokens: config.GATEWAY_MAX_BUDGET_TOKENS ?? null,
          },
          scheduledTasksPerAgent: config.MAX_SCHEDULED_TASKS_PER_AGENT,
          wakesInFlightPerTenant: config.WAKES_IN_FLIGHT_PER_TENANT,
        },
        tools: {
          globalToolPolicy: config.GLOBAL_TOOL_POLICY,
          maxSubSessionDepth: config.MAX_SUBSESSION_DEPTH,
          webSearch: config.WEB_SEARCH_URL !== undefined,
          maxChildrenPerSession: config.MAX_CHILDREN_PER_SESSION,
          browserImages: config.SANDBOX_BROWSER_IMAGES,
        },
        models: {
          egress: { allowedHosts: config.EGRESS_ALLOWED_HOSTS },
          baseUrlHosts: config.MODEL_BASE_URL_ALLOWED_HOSTS,
          compatibleKeyHosts: config.OPENAI_COMPATIBLE_KEY_HOSTS,
        },
        credentialKeys: config.PROVIDER_CREDENTIAL_KEYS,
        sandboxLimits: sandboxLimits(config),
        ...(config.GATEWAY_CONSOLE_DIR !== "" && { consoleDir: config.GATEWAY_CONSOLE_DIR }),
        memoryLimits: memoryLimits(config),
        substrateLimits: substrateLimits(config),
      },
    });
    const port = await api.listen(config.PORT, config.HOST);
    log.info({ port }, "API listening");
    return {
      stop: async () => {
        await api.close();
        await agentSql.end();
      },
    };
  },
});
