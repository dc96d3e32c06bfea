import type { Kysely } from "kysely";
import type { Database } from "./database";
import { withTenant } from "./tenant-scope";

/*
 * The personal-agent state: JSON values by key, shared by every session of one agent. Each function
 * joins the caller's transaction, so a state tool's effect commits with its call and result.
 */

export interface AgentScope {
  tenantId: string;
  agentId: string;
}

export function getAgentState(db: Kysely<Database>, scope: AgentScope, key: string): Promise<unknown> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const row = await trx
      .selectFrom("agent_state")
      .select("value")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("key", "=", key)
      .executeTakeFirst();
    return row?.value ?? null;
  });
}

export function setAgentState(
  db: Kysely<Database>,
  scope: AgentScope,
  key: string,
  value: unknown,
): Promise<void> {
  const json = JSON.stringify(value ?? null);
  return withTenant(db, scope.tenantId, async (trx) => {
    await trx
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
  });
}

/** True when the key existed. */
export function deleteAgentState(db: Kysely<Database>, scope: AgentScope, key: string): Promise<boolean> {
  return withTenant(db, scope.tenantId, async (trx) => {
    const deleted = await trx
      .deleteFrom("agent_state")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .where("key", "=", key)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows) > 0;
  });
}

/** Keys in order, at most `limit`, those starting with `prefix` when given (taken literally). */
export function listAgentStateKeys(
  db: Kysely<Database>,
  scope: AgentScope,
  options: { prefix?: string; limit: number },
): Promise<string[]> {
  return withTenant(db, scope.tenantId, async (trx) => {
    let query = trx
      .selectFrom("agent_state")
      .select("key")
      .where("tenant_id", "=", scope.tenantId)
      .where("agent_id", "=", scope.agentId)
      .orderBy("key")
      .limit(options.limit);
    if (options.prefix) query = query.where("key", "like", `${options.prefix.replace(/[\\%_]/g, "\\$&")}%`);
    return (await query.execute()).map((row) => row.key);
  });
}
