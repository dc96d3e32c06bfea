import { WakeloopError } from "@wakeloop/contracts";
import { describeAgentSchema, runAgentSql } from "@wakeloop/db";
import { DbSchemaInput, DbSqlInput } from "@wakeloop/tool-runtime";
import type { ToolContext } from "./tool-context";
import { errorOutcome, jsonOutcome, type ToolOutcome } from "./tool-outcome";

/** Refusals the model can act on (fix the statement, make room, ask for fewer rows): error results. */
const CORRECTABLE = new Set([
  "invalid_request",
  "agent_sql_refused",
  "agent_sql_timeout",
  "agent_sql_quota",
  "agent_sql_error",
]);

/** db_sql and db_schema, on the agent's own schema through the runner pool. */
export async function runDataTool(
  ctx: ToolContext,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  const scope = { tenantId: ctx.view.tenantId, agentId: ctx.view.agentId };
  const limits = ctx.settings.agentSql;
  try {
    switch (name) {
      case "db_sql": {
        const { sql, params } = DbSqlInput.parse(input);
        const { kind: _, ...result } = await runAgentSql(ctx.agentSql, scope, { sql, params }, limits);
        return jsonOutcome(result);
      }
      case "db_schema": {
        DbSchemaInput.parse(input);
        return jsonOutcome({ tables: await describeAgentSchema(ctx.agentSql, scope, limits) });
      }
      default:
        return null;
    }
  } catch (error) {
    if (error instanceof WakeloopError && CORRECTABLE.has(error.code)) return errorOutcome(error.message);
    throw error;
  }
}
