import type { AddressInfo } from "node:net";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { agentRoutes } from "./agents/agent-routes";
import { scheduledTaskRoutes } from "./agents/scheduled-task-routes";
import { uiComponentRoutes } from "./agents/ui-component-routes";
import { apiKeyRoutes } from "./api-keys/api-key-routes";
import { registerConsole } from "./console/console-files";
import { environmentRoutes } from "./environments/environment-routes";
import { eventRoutes } from "./events/event-routes";
import type { GatewayDeps, RouteDeps } from "./gateway-deps";
import { answerExpectContinue } from "./http/body-limit";
import { registerJsonBodyParser } from "./http/json-body-parser";
import { registerRoutes } from "./http/register-routes";
import type { Route } from "./http/route";
import { memoryRoutes } from "./memory/memory-routes";
import { registerHttpMetrics } from "./observability/http-metrics";
import { traceRoute } from "./observability/trace-route";
import { openApiRoute } from "./openapi/openapi-route";
import { providerCredentialRoutes } from "./provider-credentials/provider-credential-routes";
import { createRequestRate } from "./quotas/request-rate";
import { createStreamSlots } from "./quotas/stream-slots";
import { resourceRoutes } from "./resources/resource-routes";
import { sessionRoutes } from "./sessions/session-routes";
import { streamRoute } from "./stream/stream-route";
import { toolsRoute } from "./tools/tools-route";
import { vaultRoutes } from "./vault/vault-routes";

export interface GatewayServer {
  /** Starts accepting requests; resolves with the bound port (useful with port 0). */
  listen(port: number, host?: string): Promise<number>;
  /** Ends open event streams, then stops accepting and waits for in-flight requests. */
  close(): Promise<void>;
}

/** Every API route, in the order the OpenAPI document lists them. */
export function gatewayRoutes(deps: RouteDeps): Route[] {
  const routes = [
    ...apiKeyRoutes(deps),
    ...agentRoutes(deps),
    ...scheduledTaskRoutes(deps),
    ...uiComponentRoutes(deps),
    ...memoryRoutes(deps),
    ...resourceRoutes(deps),
    ...providerCredentialRoutes(deps),
    ...vaultRoutes(deps),
    ...environmentRoutes(deps),
    ...sessionRoutes(deps),
    ...eventRoutes(deps),
    streamRoute(deps),
    toolsRoute(deps),
    traceRoute(deps),
  ];
  return [...routes, openApiRoute(routes)];
}

export function createGatewayServer(deps: GatewayDeps): GatewayServer {
  const shutdown = new AbortController();
  // Typed as fastify's logger interface, so the app is the plain FastifyInstance the modules take.
  const loggerInstance: FastifyBaseLogger = deps.log;
  const app = Fastify({
    loggerInstance,
    bodyLimit: deps.config.bodyLimitBytes,
    // Ids are ULIDs and paths are matched exactly; a trailing slash is the same route.
    routerOptions: { ignoreTrailingSlash: true },
    // HEAD of an event stream would open a stream; HEAD is not part of the API.
    exposeHeadRoutes: false,
  });
  if (deps.meter !== undefined) registerHttpMetrics(app, deps.meter);
  registerJsonBodyParser(app, deps.config.bodyLimitBytes);
  answerExpectContinue(app.server, deps.config, deps.log);
  const routeDeps: RouteDeps = {
    db: deps.db,
    agentSql: deps.agentSql,
    bus: deps.bus,
    config: deps.config,
    clock: deps.clock ?? { now: () => new Date() },
    shutdown: shutdown.signal,
    streamSlots: createStreamSlots(deps.config.quotas.streamsPerKey),
  };
  registerRoutes(app, gatewayRoutes(routeDeps), {
    db: deps.db,
    discardBytes: deps.config.discardBytes,
    requestRate: createRequestRate(deps.config.quotas.requestRate),
  });
  if (deps.config.consoleDir !== undefined && registerConsole(app, deps.config.consoleDir) === "not_built") {
    deps.log.warn({ dir: deps.config.consoleDir }, "web console not built: /console answers 404");
  }

  return {
    async listen(port, host = "0.0.0.0") {
      await app.listen({ port, host });
      return (app.server.address() as AddressInfo).port;
    },
    async close() {
      shutdown.abort();
      await app.close();
    },
  };
}
