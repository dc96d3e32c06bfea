import { WakeloopError } from "@wakeloop/contracts";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Database } from "./database";

/*
 * Row-level security keys every tenant table on the transaction-local setting `wakeloop.tenant_id`
 * (migration 0009). `withTenant` is the one way to run tenant-scoped queries: it opens a transaction
 * and sets the tenant before anything else, so a query that forgot its `WHERE tenant_id` still sees
 * only that tenant's rows, and a pooled connection never carries a tenant into the next transaction.
 */

// Transactions this module has scoped, so nested helpers reuse them without another round trip.
const scoped = new WeakMap<Transaction<Database>, string>();

/**
 * Runs `work` in a transaction scoped to `tenantId`. Given a transaction, it joins it: setting the
 * tenant there if nobody has, refusing a second tenant in one transaction.
 */
export async function withTenant<T>(
  db: Kysely<Database>,
  tenantId: string,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (tenantId === "") {
    throw new WakeloopError("tenant_scope_invalid", "a tenant-scoped query needs a tenant id");
  }
  if (!db.isTransaction) {
    return db.transaction().execute(async (trx) => {
      await scope(trx, tenantId);
      return work(trx);
    });
  }
  const trx = db as Transaction<Database>;
  await scopeTransaction(trx, tenantId);
  return work(trx);
}

/** Scopes the caller's transaction to `tenantId` unless it already is; a second tenant is refused. */
export async function scopeTransaction(trx: Transaction<Database>, tenantId: string): Promise<void> {
  const current = scoped.get(trx);
  if (current === tenantId) return;
  if (current !== undefined) {
    throw new WakeloopError("tenant_scope_mismatch", "one transaction cannot act for two tenants", {
      details: { scoped: current, requested: tenantId },
    });
  }
  await scope(trx, tenantId);
}

async function scope(trx: Transaction<Database>, tenantId: string): Promise<void> {
  await sql`SELECT set_config('wakeloop.tenant_id', ${tenantId}, true)`.execute(trx);
  scoped.set(trx, tenantId);
}
