import { type Kysely, sql } from "kysely";
import type { Database, WakeRow } from "./database";

export interface ClaimWakesInput {
  tenantId: string;
  /** Wakes of one tenant that may be in flight at once: published and queued, or running. */
  maxInFlight: number;
}

/**
 * Marks as published the oldest held wakes of a tenant, as many as its in-flight limit has room for,
 * and returns them, oldest first, for the caller to publish: one call of `wl_claim_wakes`, which
 * counts and marks under a per-tenant advisory lock, so any number of orchestrator replicas together
 * never go past the limit. A tenant that holds no wake gets nothing at once, without the lock (the
 * common case after a wake ends); an opener whose wake was held claims again after its commit, so that
 * check strands nothing (migration 0034). A wake marked here whose publish is then lost is republished
 * by the sweeper; it keeps its place.
 */
export async function claimWakesToPublish(db: Kysely<Database>, input: ClaimWakesInput): Promise<WakeRow[]> {
  const { rows } =
    await sql<WakeRow>`SELECT * FROM wl_claim_wakes(${input.tenantId}, ${input.maxInFlight}::integer)`.execute(
      db,
    );
  return rows;
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
