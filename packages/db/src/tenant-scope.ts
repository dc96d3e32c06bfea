import { WakeloopError } from "@wakeloop/contracts";
import { type Kysely, sql, type Transaction } from "kysely";
import pg from "pg";
import type { Database } from "./database";

/*
 * Row-level security keys every tenant table on the transaction-local setting `wakeloop.tenant_id`
 * (migration 0009). `withTenant` is the one way to run tenant-scoped queries: it opens a transaction
 * and sets the tenant before anything else, so a query that forgot its `WHERE tenant_id` still sees
 * only that tenant's rows, and a pooled connection never carries a tenant into the next transaction.
 */

// Transactions this module has scoped, so nested helpers reuse them without another round trip.
const scoped = new WeakMap<Kysely<Database>, string>();

/** True inside a transaction: kysely's own, or one `withTenant` began on a pinned connection. */
export function inTransaction(db: Kysely<Database>): boolean {
  return db.isTransaction || scoped.has(db);
}

/**
 * Runs `work` in a transaction scoped to `tenantId`. Given a transaction, it joins it: setting the
 * tenant there if nobody has, refusing a second tenant in one transaction. A new transaction begins
 * and is scoped in one round trip (`BEGIN` and `set_config` sent as one simple query on a pinned
 * connection), since every tenant-scoped write pays for it.
 */
export async function withTenant<T>(
  db: Kysely<Database>,
  tenantId: string,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (tenantId === "") {
    throw new WakeloopError("tenant_scope_invalid", "a tenant-scoped query needs a tenant id");
  }
  if (!inTransaction(db)) {
    return db.connection().execute(async (conn) => {
      await sql
        .raw(`BEGIN; SELECT set_config('wakeloop.tenant_id', ${pg.escapeLiteral(tenantId)}, true)`)
        .execute(conn);
      scoped.set(conn, tenantId);
      try {
        // Queries only, like a kysely transaction: `inTransaction` keeps nested helpers joining it.
        const result = await work(conn as Transaction<Database>);
        await sql.raw("COMMIT").execute(conn);
        return result;
      } catch (error) {
        await sql
          .raw("ROLLBACK")
          .execute(conn)
          .catch(() => undefined);
        throw error;
      } finally {
        scoped.delete(conn);
      }
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
