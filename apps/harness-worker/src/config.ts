import { hostname } from "node:os";
import { PriceTable } from "@wakeloop/contracts";
import {
  type Env,
  envCount,
  hostList,
  jsonEnv,
  ProviderSettingsEnv,
  parseConfig,
  serviceEnv,
  ToolSettingsEnv,
} from "@wakeloop/service-kit";
import { z } from "zod";

/** Harness worker settings: the shared ones (Postgres, NATS, telemetry, health and metrics ports) come from serviceEnv. */
export const HarnessWorkerEnv = serviceEnv({ healthPort: 9082, metricsPort: 9466 })
  .extend({
    WORKER_ID: z
      .string()
      .min(1)
      .default(`${hostname()}-${process.pid}`)
      .describe("Recorded on the wakes this worker holds, so an operator can tell whose lease expired"),
    // A wake spends nearly all its time waiting on the model (seconds per request, against a few ms of
    // Postgres writes and CPU per step), so one process runs hundreds at once on one core; memory and
    // Postgres connections are the limits, enforced below while pulling, not a small slot count.
    WORKER_SLOTS: envCount(1, 256).describe(
      "Wakes run at once by this process (I/O-bound: most of a wake is waiting on the model); scale out with more processes",
    ),
    WORKER_MAX_RSS_MB: envCount(64, 1_536).describe(
      "No new wake is taken while the process' resident memory is above this; wakes in hand go on",
    ),
    WORKER_MAX_DB_WAITERS: envCount(0, 32).describe(
      "No new wake is taken while more queries than this wait for a pooled Postgres connection",
    ),
    DATABASE_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Postgres connections this process may hold; by default WORKER_SLOTS / 16, at least 10 and at most 32",
      ),
    HISTORY_CACHE_EVENTS: envCount(0, 100_000).describe(
      "Events of recently run sessions kept in memory, so a session's next wake on this worker reads only what is new (0: none)",
    ),
    LEASE_TTL_MS: envCount(1_000, 15_000).describe(
      "A wake whose worker stops renewing for this long is rescheduled; renewed every third of it",
    ),
    MAX_MODEL_REQUESTS_PER_WAKE: envCount(1, 200).describe(
      "A runaway guard: a wake that made this many model requests ends its turn (loop detection stops most loops first)",
    ),
    MAX_REMINDERS_PER_SESSION: envCount(0, 20).describe(
      "Reminders not fired yet one session may have; set_reminder refuses more",
    ),
    MODEL_MAX_RETRIES: envCount(0, 4).describe(
      "Retries of one model request on overload, rate limits and failures",
    ),
    MODEL_RETRY_BASE_MS: envCount(1, 500).describe("First retry delay; doubles each retry, with full jitter"),
    MODEL_RETRY_MAX_MS: envCount(1, 30_000).describe(
      "Ceiling of one retry delay (a provider's retry-after wins)",
    ),
    MODEL_TIMEOUT_MS: envCount(1_000, 600_000).describe("One model request may take this long"),
    MODEL_PROMPT_CACHE: z
      .enum(["off", "5m", "1h"])
      .default("5m")
      .describe(
        "Prompt caching: Anthropic cache_control breakpoints with this lifetime and OpenAI's prompt_cache_key per session (off: ask for none)",
      ),
    MODEL_PRICES: jsonEnv(PriceTable).describe(
      'Prices per model id in USD per million tokens, for costs and money budgets (JSON: {"<model>": {"input", "output", "cache_read", "cache_write"}}); a model not listed has an unknown cost',
    ),
    MODEL_CLIENT_CACHE_SIZE: envCount(1, 256).describe(
      "Model SDK clients (one per provider, base URL and key) a worker keeps for reuse; the least recently used goes first",
    ),
    ANTHROPIC_API_KEY: z.string().optional().describe("For agents whose model provider is anthropic"),
    OPENAI_API_KEY: z.string().optional().describe("For agents whose model provider is openai"),
    OPENAI_COMPATIBLE_API_KEY: z
      .string()
      .optional()
      .describe(
        "For openai_compatible servers on OPENAI_COMPATIBLE_KEY_HOSTS that want a key (vLLM --api-key)",
      ),
    SANDBOX_ENABLED: z
      .enum(["true", "false"])
      .default("true")
      .transform((value) => value === "true")
      .describe("Whether a sandbox-runner is deployed; without one, sandbox tools are never offered"),
    MEMORY_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .default(15_000)
      .describe(
        "One memory call's wait for its reply; past it the replica is taken as gone and the call is sent again",
      ),
    MEMORY_RETRY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(60_000)
      .describe(
        "How long a memory call is sent again while no replica answers (writes are idempotent by call id)",
      ),
    MEMORY_RECALL_TOKENS: envCount(0, 1_000).describe(
      "Tokens of memory entries recalled into the system context at wake start for the new input (0: no recall)",
    ),
    MEMORY_RECALL_HITS: z.coerce
      .number()
      .int()
      .min(1)
      .max(50)
      .default(5)
      .describe("Memory hits asked for at wake start"),
    MEMORY_CONTEXT_TIMEOUT_MS: envCount(50, 2_000).describe(
      "How long a wake waits for each of the memory service's answers at its start (skills index, recalled memory); past it, it goes on without",
    ),
    WEB_FETCH_ALLOWED_HOSTS: hostList().describe(
      "Hosts web_fetch may reach on internal addresses (an intranet wiki); separate from EGRESS_ALLOWED_HOSTS so a model server is not a fetch target; comma-separated",
    ),
    WEB_FETCH_MAX_BYTES: envCount(1_024, 5_242_880).describe(
      "Largest page body web_fetch reads; a larger one is an error result",
    ),
    WEB_FETCH_TIMEOUT_MS: envCount(100, 20_000).describe(
      "One web_fetch or web_search request, redirects and body included",
    ),
    WEB_FETCH_MAX_CHARS: envCount(100, 100_000).describe(
      "Most characters of page content one web_fetch returns (a call may ask for fewer); the rest is cut with a notice",
    ),
    MCP_ALLOWED_HOSTS: hostList().describe(
      "Hosts MCP servers may be reached on at internal addresses (a team's server on the intranet); others must resolve to public addresses; comma-separated",
    ),
    MCP_LIST_TIMEOUT_MS: envCount(100, 5_000).describe(
      "Connecting to one MCP server and listing its tools at a wake's start; past it the server is unreachable for that wake",
    ),
    MCP_MAX_CALL_MS: envCount(1_000, 600_000).describe(
      "Longest any MCP request may take at the egress guard, streamed results included (a server's call_timeout_ms is capped by it)",
    ),
    MCP_MAX_RESPONSE_BYTES: envCount(1_024, 10_485_760).describe(
      "Largest MCP response read; a larger one fails the call",
    ),
    AGENT_SQL_DATABASE_URL: z
      .string()
      .url()
      .optional()
      .describe(
        "Where db_sql runs: the agent SQL runner role (made by the migrate CLI as <app role>_sql, with WAKELOOP_AGENT_SQL_PASSWORD) on the agent SQL database, apart from the platform's; by default DATABASE_URL with that user, database <name>_agents and no password",
      ),
    AGENT_SQL_POOL_MAX: envCount(1, 4).describe("Postgres connections held for agent SQL"),
    AGENT_SQL_STATEMENT_TIMEOUT_MS: envCount(100, 5_000).describe(
      "One db_sql / db_schema statement is cancelled (and rolled back) past this",
    ),
    AGENT_SQL_MAX_ROWS: envCount(1, 1_000).describe(
      "Rows one db_sql read returns; more are cut with truncated: true",
    ),
    AGENT_SQL_QUOTA_MB: envCount(1, 100).describe(
      "Size of everything one agent's SQL role owns (tables, indexes, TOAST, sequences); a statement that would pass it is rolled back",
    ),
    AGENT_SQL_MAX_OBJECTS: envCount(10, 500).describe(
      "Objects (tables, indexes, TOAST, sequences, views, types, …) one agent's SQL role may own; each relation is a lock when a statement touches it, and the Postgres lock table is shared by the whole server",
    ),
    LLM_MODEL_LOW: z
      .string()
      .min(1)
      .optional()
      .describe(
        "llm_generate intelligence 'low': a model id at the agent's provider; unset, the agent's own model",
      ),
    LLM_MODEL_MEDIUM: z
      .string()
      .min(1)
      .optional()
      .describe(
        "llm_generate intelligence 'medium': a model id at the agent's provider; unset, the agent's own model",
      ),
    LLM_MODEL_HIGH: z
      .string()
      .min(1)
      .optional()
      .describe(
        "llm_generate intelligence 'high': a model id at the agent's provider; unset, the agent's own model",
      ),
  })
  .extend(ToolSettingsEnv.shape)
  .extend(ProviderSettingsEnv.shape);
export type HarnessWorkerConfig = Omit<z.output<typeof HarnessWorkerEnv>, "DATABASE_POOL_MAX"> & {
  DATABASE_POOL_MAX: number;
};

/**
 * Postgres connections for `slots` wakes. A wake holds a connection only while it commits (a few ms
 * per model round trip, which takes hundreds), so sixteen wakes share one easily; Postgres gains no
 * throughput from more connections than a few per core, and each costs it a process and counts
 * against max_connections (100 by default) for every worker together. Never below pg's 10, which
 * small slot counts ran with so far.
 */
export function poolMaxForSlots(slots: number): number {
  return Math.min(32, Math.max(10, Math.ceil(slots / 16)));
}

export function loadConfig(env: Env = process.env): HarnessWorkerConfig {
  const config = parseConfig(HarnessWorkerEnv, env);
  return { ...config, DATABASE_POOL_MAX: config.DATABASE_POOL_MAX ?? poolMaxForSlots(config.WORKER_SLOTS) };
}
