import type { Bus } from "@wakeloop/bus";
import type { AgentSqlPool, Database, MemoryLimits, SubstrateLimits } from "@wakeloop/db";
import type { ModelEndpointPolicy } from "@wakeloop/model-providers";
import type { CredentialKey } from "@wakeloop/provider-credentials";
import type { SandboxLimits } from "@wakeloop/service-kit";
import type { Logger, Meter } from "@wakeloop/telemetry";
import type { PlatformToolSettings } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import type { BudgetLimits } from "./quotas/budget-policy";
import type { RequestRateSettings } from "./quotas/request-rate";
import type { StreamSlots } from "./quotas/stream-slots";

export interface Clock {
  now(): Date;
}

export interface GatewayServerConfig {
  /** Largest request body accepted; bigger ones get a 413 before they are parsed. */
  bodyLimitBytes: number;
  /** How much of a refused request's unread body is thrown away so its client reads the answer. */
  discardBytes: number;
  /** How often an idle event stream sends a comment, so proxies keep it open and dead peers are found. */
  sseKeepAliveMs: number;
  /** Must match the harness workers' settings, so the tools route shows what a wake would offer. */
  tools: PlatformToolSettings;
  /** Must match the harness workers' settings, so an agent saved here is one they will call. */
  models: ModelEndpointPolicy;
  /** Seal tenants' provider credentials; empty disables them. */
  credentialKeys: readonly CredentialKey[];
  /** Must match the sandbox runners' limits, so an environment saved here is one they will run. */
  sandboxLimits: SandboxLimits;
  /** Must match the memory service's limits, so a person's write obeys the same bounds as a tool's. */
  memoryLimits: MemoryLimits;
  /** Must match the sandbox runners' limits, so a person's restore obeys the same bounds as a tool's. */
  substrateLimits: SubstrateLimits;
  quotas: QuotaSettings;
  /** The built web console (apps/console/dist) served at /console; unset serves none. */
  consoleDir?: string;
}

/** What one tenant or key may use (issue #8 point 8); see each module under quotas/. */
export interface QuotaSettings {
  requestRate: RequestRateSettings;
  /** Open event streams per API key, per gateway process. */
  streamsPerKey: number;
  /** Sessions not terminated, per tenant, across replicas; 0 is no limit. */
  openSessionsPerTenant: number;
  budgets: BudgetLimits;
  /** Unfinished scheduled tasks per agent; must match the harness workers' (MAX_SCHEDULED_TASKS_PER_AGENT). */
  scheduledTasksPerAgent: number;
  /** Wakes one tenant may have in flight; must match the orchestrator's (WAKES_IN_FLIGHT_PER_TENANT). */
  wakesInFlightPerTenant: number;
}

export interface GatewayDeps {
  db: Kysely<Database>;
  /** The app role on the agent SQL database: archiving an agent drops its database there. */
  agentSql: AgentSqlPool;
  bus: Bus;
  config: GatewayServerConfig;
  log: Logger;
  clock?: Clock;
  /** Where request durations are recorded; none when omitted (tests that start the server in-process). */
  meter?: Meter;
}

/** What route handlers get: the deps with the clock resolved. */
export interface RouteDeps {
  db: Kysely<Database>;
  agentSql: AgentSqlPool;
  bus: Bus;
  config: GatewayServerConfig;
  clock: Clock;
  /** Aborted when the server closes, ending long-lived responses such as event streams. */
  shutdown: AbortSignal;
  streamSlots: StreamSlots;
}
