import { type Kysely, sql } from "kysely";
import type { Database, WakeRow } from "./database";
import { withTenant } from "./tenant-scope";

export interface ClaimWakesInput {
  tenantId: string;
  /** Wakes of one tenant that may be in flight at once: published and queued, or running. */
  maxInFlight: number;
}

/**
 * Marks as published the oldest held wakes of a tenant, as many as its in-flight limit has room for,
 * and returns them for the caller to publish. Counting and marking share one transaction under a
 * per-tenant advisory lock, so any number of orchestrator replicas together never go past the limit.
 * A wake marked here whose publish is then lost is republished by the sweeper; it keeps its place.
 */
export function claimWakesToPublish(db: Kysely<Database>, input: ClaimWakesInput): Promise<WakeRow[]> {
  return withTenant(db, input.tenantId, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`wl.wake_dispatch.${input.tenantId}`}, 0))`.execute(
      trx,
    );
    const inFlight = await trx
      .selectFrom("wakes")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("tenant_id", "=", input.tenantId)
      .where("status", "in", ["queued", "running"])
      .where((eb) => eb.or([eb("status", "=", "running"), eb("published_at", "is not", null)]))
      .executeTakeFirstOrThrow();
    const room = input.maxInFlight - Number(inFlight.count);
    if (room <= 0) return [];
    return trx
      .updateTable("wakes")
      .set({ published_at: sql<Date>`now()` })
      .where(
        "id",
        "in",
        trx
          .selectFrom("wakes")
          .select("id")
          .where("tenant_id", "=", input.tenantId)
          .where("status", "=", "queued")
          .where("published_at", "is", null)
          .orderBy("due_at")
          .orderBy("created_at")
          .orderBy("id")
          .limit(room),
      )
      .returningAll()
      .execute()
      .then((claimed) => claimed.sort((a, b) => a.due_at.getTime() - b.due_at.getTime()));
  });
}

/**
 * Tenants with wakes held back by their limit, for the periodic pass that repairs a missed dispatch.
 * The scan crosses tenants, so it goes through a definer function that returns tenant ids only.
 */
export async function tenantsWithHeldWakes(db: Kysely<Database>, limit = 100): Promise<string[]> {
  const result = await sql<{
    tenant_id: string;
  }>`SELECT tenant_id FROM wl_tenants_with_held_wakes(${limit})`.execute(db);
  return result.rows.map((row) => row.tenant_id);
}
