import { randomBytes } from "node:crypto";
import type { Writable } from "node:stream";
import { type Bus, connectBus, createOutboxRelay, ensureStreams, type OutboxRelay } from "@wakeloop/bus";
import type { ToolPolicy } from "@wakeloop/contracts";
import { agentSqlDatabaseUrl, createAgentSqlPool, type Database } from "@wakeloop/db";
import type { ModelEndpointPolicy } from "@wakeloop/model-providers";
import type { CredentialKey } from "@wakeloop/provider-credentials";
import {
  MemoryLimitsEnv,
  memoryLimits,
  type SandboxLimits,
  SandboxLimitsEnv,
  SubstrateLimitsEnv,
  sandboxLimits,
  substrateLimits,
} from "@wakeloop/service-kit";
import { createLogger } from "@wakeloop/telemetry";
import {
  cleanupPrefix,
  createTestDatabase,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";
import type { Kysely } from "kysely";
import type { QuotaSettings } from "../gateway-deps";
import { createGatewayServer, type GatewayServer } from "../server";
import { createTenant } from "../tenants/create-tenant";

/**
 * A gateway on port 0 over its own database and subject prefix, on the real Postgres and NATS the
 * test run uses. `relay: true` also runs the outbox relay, so committed events reach JetStream.
 */

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON; tests read it through the contracts' schemas, which also checks the shape. */
  body: unknown;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is instead of `JSON.stringify(body)`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface GatewayFixture {
  url: string;
  db: Kysely<Database>;
  database: TestDatabase;
  bus: Bus;
  /** A tenant made for the test file, with its first owner key. */
  tenant: { id: string; ownerKey: string };
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  newTenant(name: string): Promise<{ id: string; ownerKey: string }>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  relay?: boolean;
  bodyLimitBytes?: number;
  discardBytes?: number;
  sseKeepAliveMs?: number;
  globalToolPolicy?: ToolPolicy;
  models?: ModelEndpointPolicy;
  credentialKeys?: CredentialKey[];
  /** The operator's sandbox bounds; the defaults of SandboxLimitsEnv when omitted. */
  sandboxLimits?: SandboxLimits;
  /** Limits the test sets; the rest are generous enough never to get in a test's way. */
  quotas?: Partial<QuotaSettings>;
  /** Where the gateway's log records go; silent when omitted. */
  logDestination?: Writable;
}

export async function startGateway(options: FixtureOptions = {}): Promise<GatewayFixture> {
  const database = await createTestDatabase();
  const bus = await connectBus({ servers: testNatsUrl(), prefix: testPrefix(), name: "gateway-test" });
  await ensureStreams(bus.jsm, bus.catalog);
  let relay: OutboxRelay | undefined;
  if (options.relay === true) {
    relay = createOutboxRelay({
      db: database.appDb,
      listenUrl: database.appUrl,
      bus,
    });
    await relay.start();
  }
  const log =
    options.logDestination === undefined
      ? createLogger({ service: "gateway-test", level: "silent" })
      : createLogger({ service: "gateway-test", level: "info", destination: options.logDestination });
  // The gateway runs as the role row security binds, as in production; tests read through the owner.
  const agentSql = createAgentSqlPool({ url: agentSqlDatabaseUrl(database.appUrl), max: 2 });
  const server: GatewayServer = createGatewayServer({
    db: database.appDb,
    agentSql,
    bus,
    log,
    config: {
      bodyLimitBytes: options.bodyLimitBytes ?? 1_048_576,
      discardBytes: options.discardBytes ?? 8_388_608,
      quotas: {
        requestRate: { requests: 0, windowSeconds: 60 },
        streamsPerKey: 100,
        openSessionsPerTenant: 0,
        budgets: { defaultTokens: null, maxTokens: null },
        scheduledTasksPerAgent: 50,
        wakesInFlightPerTenant: 16,
        ...options.quotas,
      },
      sseKeepAliveMs: options.sseKeepAliveMs ?? 15_000,
      tools: {
        globalToolPolicy: options.globalToolPolicy ?? {},
        maxSubSessionDepth: 2,
        maxChildrenPerSession: 10,
        webSearch: false,
        browserImages: ["wakeloop-sandbox-browser:bookworm"],
      },
      models: options.models ?? { egress: { allowedHosts: [] }, baseUrlHosts: [], compatibleKeyHosts: [] },
      credentialKeys: options.credentialKeys ?? [{ id: "test", key: randomBytes(32) }],
      sandboxLimits: options.sandboxLimits ?? sandboxLimits(SandboxLimitsEnv.parse({})),
      memoryLimits: memoryLimits(MemoryLimitsEnv.parse({})),
      substrateLimits: substrateLimits(SubstrateLimitsEnv.parse({})),
    },
  });
  const port = await server.listen(0, "127.0.0.1");
  const url = `http://127.0.0.1:${port}`;

  const newTenant = async (name: string) => {
    const created = await createTenant(database.db, { name });
    return { id: created.tenant.id, ownerKey: created.ownerKey.key };
  };

  return {
    url,
    db: database.db,
    database,
    bus,
    tenant: await newTenant("fixture tenant"),
    newTenant,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.key !== undefined) headers.authorization = `Bearer ${requestOptions.key}`;
      let body: string | undefined = requestOptions.rawBody;
      if (body === undefined && requestOptions.body !== undefined) body = JSON.stringify(requestOptions.body);
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const response = await fetch(`${url}${path}`, { method, headers, body });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text === "" ? undefined : JSON.parse(text),
      };
    },
    async close() {
      await server.close();
      await agentSql.end();
      await relay?.stop();
      await cleanupPrefix(bus.jsm, bus.subjects.prefix);
      await bus.close();
      await database.drop();
    },
  };
}

/** The smallest valid agent, with `overrides` on top. */
export function agentBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: "support bot", model: { provider: "anthropic", id: "claude-test" }, ...overrides };
}
