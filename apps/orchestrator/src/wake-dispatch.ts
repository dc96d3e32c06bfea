import { type Bus, publishWakeJob } from "@wakeloop/bus";
import { claimWakesToPublish, type Database, tenantsWithHeldWakes } from "@wakeloop/db";
import type { Kysely } from "kysely";

/**
 * Publishes a tenant's held wakes while it has room under `maxInFlight` (issue #8: one tenant's burst
 * of sessions must not fill the shared work queue ahead of every other tenant). Called after a wake is
 * opened and after one ends; the count lives in Postgres, so every replica sees the same room.
 */
export async function dispatchWakes(
  db: Kysely<Database>,
  bus: Bus,
  tenantId: string,
  maxInFlight: number,
): Promise<number> {
  const claimed = await claimWakesToPublish(db, { tenantId, maxInFlight });
  for (const wake of claimed) await publishWakeJob(bus, wake);
  return claimed.length;
}

/** The periodic backstop: a dispatch missed after a wake ended (a crash, a lost event) happens here. */
export async function dispatchHeldWakes(
  db: Kysely<Database>,
  bus: Bus,
  maxInFlight: number,
): Promise<number> {
  let published = 0;
  for (const tenantId of await tenantsWithHeldWakes(db))
    published += await dispatchWakes(db, bus, tenantId, maxInFlight);
  return published;
}
