import type { WakeReason } from "@wakeloop/contracts";
import type { Kysely } from "kysely";
import type { Database, WakeRow } from "./database";
import { newId } from "./ids";

export interface OpenWakeInput {
  tenantId: string;
  sessionId: string;
  reason: WakeReason;
  dueAt?: Date;
}

/**
 * Records a queued wake, or returns null when the session already has an open one (queued or
 * running). Uses ON CONFLICT rather than catching the unique violation, so it is safe inside a
 * caller's transaction: a conflict does not abort it.
 */
export async function openWake(db: Kysely<Database>, input: OpenWakeInput): Promise<WakeRow | null> {
  const row = await db
    .insertInto("wakes")
    .values({
      id: newId("wake"),
      tenant_id: input.tenantId,
      session_id: input.sessionId,
      status: "queued",
      reason: input.reason,
      attempt: 1,
      due_at: input.dueAt ?? new Date(),
    })
    .onConflict((conflict) =>
      conflict.column("session_id").where("status", "in", ["queued", "running"]).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}
