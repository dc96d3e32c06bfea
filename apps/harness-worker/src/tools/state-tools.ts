import { type Database, withTenant } from "@wakeloop/db";
import { DeleteStateInput, GetStateInput, ListStateKeysInput, SetStateInput } from "@wakeloop/tool-runtime";
import type { Kysely } from "kysely";
import { jsonOutcome, type ToolOutcome } from "./tool-outcome";

export interface StateScope {
  tenantId: string;
  agentId: string;
}

/** The personal-agent state tools: JSON values by key, shared by every session of one agent. */
export function runStateTool(
  db: Kysely<Database>,
  scope: StateScope,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  return withTenant(db, scope.tenantId, (trx) => runScoped(trx, scope, name, input));
}

async function runScoped(
  db: Kysely<Database>,
  scope: StateScope,
  name: string,
  input: Record<string, unknown>,
): Promise<ToolOutcome | null> {
  const scoped = db
    .selectFrom("agent_state")
    .where("tenant_id", "=", scope.tenantId)
    .where("agent_id", "=", scope.agentId);
  switch (name) {
    case "get_state": {
      const { key } = GetStateInput.parse(input);
      const row = await scoped.select("value").where("key", "=", key).executeTakeFirst();
      return jsonOutcome({ key, value: row?.value ?? null });
    }
    case "set_state": {
      const { key, value } = SetStateInput.parse(input);
      const json = JSON.stringify(value ?? null);
      await db
        .insertInto("agent_state")
        .values({
          tenant_id: scope.tenantId,
          agent_id: scope.agentId,
          key,
          value: json,
          updated_at: new Date(),
        })
        .onConflict((conflict) =>
          conflict
            .columns(["tenant_id", "agent_id", "key"])
            .doUpdateSet({ value: json, updated_at: new Date() }),
        )
        .execute();
      return jsonOutcome({ key, stored: true });
    }
    case "delete_state": {
      const { key } = DeleteStateInput.parse(input);
      const deleted = await db
        .deleteFrom("agent_state")
        .where("tenant_id", "=", scope.tenantId)
        .where("agent_id", "=", scope.agentId)
        .where("key", "=", key)
        .executeTakeFirst();
      return jsonOutcome({ key, deleted: Number(deleted.numDeletedRows) > 0 });
    }
    case "list_state_keys": {
      const { prefix } = ListStateKeysInput.parse(input);
      let query = scoped.select("key").orderBy("key").limit(1_000);
      if (prefix) query = query.where("key", "like", `${prefix.replace(/[\\%_]/g, "\\$&")}%`);
      const rows = await query.execute();
      return jsonOutcome({ keys: rows.map((row) => row.key) });
    }
    default:
      return null;
  }
}
