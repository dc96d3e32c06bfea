import type { Tracer } from "@opentelemetry/api";
import type { TokenUsage } from "@wakeloop/contracts";
import type { AgentSqlPool, AgentStateWrite, Database } from "@wakeloop/db";
import type { MemoryClient } from "@wakeloop/memory-client";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { EffectiveTool } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import type { ModelClients } from "../model/model-clients";
import type { SessionView } from "../session/session-view";
import type { SessionWriter } from "../session/session-writer";
import type { CostMeter } from "../wake/cost-meter";
import type { WakeMetrics } from "../wake-metrics";
import type { WakeSettings } from "../wake-settings";
import type { WakeMcpClients } from "./mcp/mcp-clients";
import type { WebAccess } from "./web-tools";

export interface ToolContext {
  /** Where inline tools' effects go: the pool, or the transaction their results commit in. */
  db: Kysely<Database>;
  /** True when the calls' effects commit with their results, so no call can have an unknown outcome. */
  inCommit?: boolean;
  /**
   * With `inCommit`: the session's usage counting the step's model response, which commits with the
   * calls' results (so `view.state.usage` lacks it while they run). A spawn carves from what is left
   * after it.
   */
  stepUsage?: TokenUsage;
  /**
   * With `inCommit` and no transaction (a step of `writesWithAppend` calls only): where `set_state`
   * puts its writes, which commit in the step's append.
   */
  agentState?: AgentStateWrite[];
  sandbox: SandboxClient | null;
  memory: MemoryClient | null;
  web: WebAccess;
  /** The wake's MCP connections; null when the session has no MCP server. */
  mcp: WakeMcpClients | null;
  tracer: Tracer;
  metrics: WakeMetrics;
  /** The wake's running cost; the step's `session.usage` for the calls' model requests is charged to it. */
  costs: CostMeter;
  view: SessionView;
  writer: SessionWriter;
  settings: WakeSettings;
  /** Model clients by tenant and model, for llm_generate (the wake's own client is resolved the same way). */
  models: ModelClients;
  /** The agent SQL runner's pool (db_sql / db_schema). */
  agentSql: AgentSqlPool;
  /** Interrupt or lost lease: `cancel` tools stop, `block` tools finish. */
  signal: AbortSignal;
}

export interface RunnableCall {
  id: string;
  tool: EffectiveTool;
  input: Record<string, unknown>;
  /** A loop-detection warning added to the result as a runtime note for the model. */
  note?: string;
  /** A person allowed this call (`user.tool_confirmation`), which also covers the exec policy's ask. */
  approved?: boolean;
}

/**
 * Inline tools whose effects live elsewhere: agent SQL commits on its own connection (the agent's role)
 * and llm_generate and outcome_evaluate call a model provider, so their calls are recorded before they
 * run (invariant 7).
 */
const OUT_OF_COMMIT_GROUPS: ReadonlySet<string> = new Set(["database", "llm", "evaluator"]);

/** Inline tools run in the worker with effects, if any, in our own Postgres: they can commit with their call. */
export function runsInDatabase(tool: Pick<EffectiveTool, "executor" | "group">): boolean {
  return tool.executor === "inline" && !OUT_OF_COMMIT_GROUPS.has(tool.group);
}
