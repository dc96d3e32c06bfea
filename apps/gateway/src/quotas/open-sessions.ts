import { WakeloopError } from "@wakeloop/contracts";
import type { Database } from "@wakeloop/db";
import { sql, type Transaction } from "kysely";

/** Sessions end when they are archived or complete; a client should not spin on a full tenant. */
const RETRY_AFTER_SECONDS = 30;

/**
 * Refuses a new session when the tenant already has `max` that are not terminated (0: no limit). Run
 * in the tenant-scoped transaction that creates the session: it takes a per-tenant advisory lock first,
 * so concurrent creates of one tenant, on any gateway replica, take turns and cannot all pass the same
 * count (the services' role has no access to the `tenants` row itself).
 */
export async function requireRoomForSession(
  trx: Transaction<Database>,
  tenantId: string,
  max: number,
): Promise<void> {
  if (max === 0) return;
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`wl.open_sessions.${tenantId}`}, 0))`.execute(
    trx,
  );
  const { open } = await trx
    .selectFrom("sessions")
    .select((eb) => eb.fn.countAll<number>().as("open"))
    .where("tenant_id", "=", tenantId)
    .where("status", "<>", "terminated")
    .executeTakeFirstOrThrow();
  if (open >= max) {
    throw new WakeloopError(
      "quota_exceeded",
      `this tenant has ${open} open sessions, the most allowed; archive one to start another`,
      { details: { limit: max, retry_after_seconds: RETRY_AFTER_SECONDS } },
    );
  }
}
