import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { connectBus } from "@wakeloop/bus";
import {
  AppProcess,
  cleanupPrefix,
  createTestDatabase,
  type TestDatabase,
  testNatsUrl,
  testPrefix,
} from "@wakeloop/testing";

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * The gateway alone, as its own process on its own database and subject prefix, for tests of the HTTP
 * edge that need no workers. `databaseUrl` lets a test put a proxy between the gateway and Postgres.
 */
export interface GatewayProcess {
  baseUrl: string;
  port: number;
  database: TestDatabase;
  ownerKey: string;
  process: AppProcess;
  /** A tenant of its own, with its first owner key. */
  newTenant(name: string): Promise<{ tenantId: string; ownerKey: string }>;
  stop(): Promise<void>;
}

export async function startGatewayProcess(
  options: { env?: Record<string, string>; databaseUrl?: (url: string) => Promise<string> } = {},
): Promise<GatewayProcess> {
  const database = await createTestDatabase();
  const prefix = testPrefix();
  const newTenant = async (name: string) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        "apps/gateway/src/cli/create-tenant.ts",
        "--name",
        name,
        "--json",
        "--database-url",
        database.url,
      ],
      { cwd: ROOT },
    );
    const created = JSON.parse(stdout) as { tenant: { id: string }; owner_key: { key: string } };
    return { tenantId: created.tenant.id, ownerKey: created.owner_key.key };
  };
  const { ownerKey } = await newTenant("security");
  const gateway = new AppProcess(
    "gateway",
    {
      // The services' role, as in production (row-level security binds it); tenants are made as the owner.
      DATABASE_URL: options.databaseUrl ? await options.databaseUrl(database.appUrl) : database.appUrl,
      NATS_URL: testNatsUrl(),
      // The shared test NATS has no auth.
      NATS_ALLOW_ANONYMOUS: "true",
      WL_SUBJECT_PREFIX: prefix,
      HEALTH_PORT: "0",
      METRICS_PORT: "0",
      PORT: "0",
      LOG_LEVEL: "info",
      ...options.env,
    },
    { cwd: ROOT },
  );
  const stop = async () => {
    gateway.kill("SIGTERM");
    await gateway.exitCode(15_000).catch(() => undefined);
    const bus = await connectBus({ servers: testNatsUrl(), name: "security-cleanup" });
    try {
      await cleanupPrefix(bus.jsm, prefix);
    } finally {
      await bus.close();
    }
    await database.drop();
  };
  try {
    const listening = await gateway.record("API listening", 60_000);
    const port = Number(listening.port);
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      port,
      database,
      ownerKey,
      process: gateway,
      newTenant,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
