import { WakeloopError } from "@wakeloop/contracts";
import type { Database } from "@wakeloop/db";
import type { Transaction } from "kysely";

/** Sessions end when they are archived or complete; a client should not spin on a full tenant. */
const RETRY_AFTER_SECONDS = 30;

/**
 * Refuses a new session when the tenant already has `max` that are not terminated (0: no limit). Run
 * in the transaction that creates the session: it locks the tenant's row first, so concurrent creates
 * of one tenant, on any gateway replica, take turns and cannot all pass the same count.
 */
export async function requireRoomForSession(
  trx: Transaction<Database>,
  tenantId: string,
  max: number,
): Promise<void> {
  if (max === 0) return;
  await trx.selectFrom("tenants").select("id").where("id", "=", tenantId).forUpdate().execute();
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
