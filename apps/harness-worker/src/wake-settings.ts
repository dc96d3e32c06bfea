import type { PriceTable } from "@wakeloop/contracts";
import type { AgentSqlLimits } from "@wakeloop/db";
import type { Intelligence, PlatformToolSettings } from "@wakeloop/tool-runtime";
import type { RetryPolicy } from "./model/call-model";
import type { RecallSettings } from "./wake/wake-memory";

export interface WakeSettings extends PlatformToolSettings {
  workerId: string;
  leaseTtlMs: number;
  /** Model requests one wake may make before it yields (the session stays idle with end_turn). */
  maxModelRequestsPerWake: number;
  retry: RetryPolicy;
  /** Unfinished scheduled tasks one agent may have (`create_scheduled_task` refuses more). */
  maxScheduledTasksPerAgent: number;
  /** Reminders not fired yet one session may have (`set_reminder` refuses more). */
  maxRemindersPerSession: number;
  /** db_sql / db_schema guardrails: statement timeout, rows returned, schema size. */
  agentSql: AgentSqlLimits;
  /** The model id llm_generate uses per intelligence level; absent, the agent's own model. */
  llmModels: Partial<Record<Intelligence, string>>;
  /** Memory recalled into the system context at wake start. */
  recall: RecallSettings;
  /** The lifetime prompt-cache entries are asked for; null asks for no caching. */
  promptCache: "5m" | "1h" | null;
  /** Prices by model id, for each request's cost; a model not listed has an unknown cost. */
  prices: PriceTable;
}
