import { type Database, newId, scopeTransaction, type ToolCallStatus } from "@wakeloop/db";
import { sql, type Transaction } from "kysely";

export interface LedgerEntry {
  id: string;
  name: string;
  input: Record<string, unknown>;
  idempotent: boolean;
}

export interface LedgerUpdate {
  id: string;
  status: ToolCallStatus;
  result?: unknown;
}

interface Scope {
  tenantId: string;
  sessionId: string;
  wakeId: string;
}

/**
 * Records a batch's plan and its calls as `planned` (invariant 4), in one statement: this runs on the
 * hot path of every tool step, inside the transaction that announces the calls.
 */
export async function recordPlanned(
  trx: Transaction<Database>,
  scope: Scope,
  batchPlan: unknown,
  calls: readonly LedgerEntry[],
): Promise<void> {
  await scopeTransaction(trx, scope.tenantId);
  const batchId = newId("toolBatch");
  const rows = calls.map(
    (call) =>
      sql`(${call.id}, ${call.name}, ${JSON.stringify(call.input)}::jsonb, ${call.idempotent}::boolean)`,
  );
  const insertCalls =
    rows.length === 0
      ? sql``
      : sql`, calls AS (
          INSERT INTO tool_calls (id, tenant_id, session_id, wake_id, name, input, status, idempotent, batch_id)
          SELECT v.id, ${scope.tenantId}, ${scope.sessionId}, ${scope.wakeId}, v.name, v.input, 'planned', v.idempotent, ${batchId}
          FROM (VALUES ${sql.join(rows)}) AS v (id, name, input, idempotent)
        )`;
  await sql`
    WITH batch AS (
      INSERT INTO tool_batches (id, tenant_id, session_id, wake_id, plan)
      VALUES (${batchId}, ${scope.tenantId}, ${scope.sessionId}, ${scope.wakeId}, ${JSON.stringify(batchPlan)}::jsonb)
    )${insertCalls}
    SELECT 1`.execute(trx);
}

/** Records the outcomes of calls, in one statement, in the transaction that appends their results. */
export async function recordSettled(
  trx: Transaction<Database>,
  tenantId: string,
  updates: readonly LedgerUpdate[],
): Promise<void> {
  if (updates.length === 0) return;
  await scopeTransaction(trx, tenantId);
  const rows = updates.map(
    (update) =>
      sql`(${update.id}, ${update.status}, ${update.result === undefined ? null : JSON.stringify(update.result)}::jsonb)`,
  );
  await sql`
    UPDATE tool_calls AS t SET status = v.status, result = v.result, updated_at = now()
    FROM (VALUES ${sql.join(rows)}) AS v (id, status, result)
    WHERE t.id = v.id AND t.tenant_id = ${tenantId}`.execute(trx);
}
