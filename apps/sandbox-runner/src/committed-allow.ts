import { type Database, withTenant } from "@wakeloop/db";
import { type Kysely, sql } from "kysely";

/** Whether an `approved` call really has its allow: the question the runner asks before running it. */
export type ApprovalCheck = (args: {
  tenantId: string;
  sessionId: string;
  toolCallId: string;
}) => Promise<boolean>;

/**
 * A committed `user.tool_confirmation{result: "allow"}` for this tool use id in this tenant's session
 * (DESIGN invariant 4). One small query, scoped to the tenant (row-level security).
 */
export async function hasCommittedAllow(
  db: Kysely<Database>,
  tenantId: string,
  sessionId: string,
  toolCallId: string,
): Promise<boolean> {
  const row = await withTenant(db, tenantId, (trx) =>
    trx
      .selectFrom("session_events")
      .select("seq")
      .where("tenant_id", "=", tenantId)
      .where("session_id", "=", sessionId)
      .where("type", "=", "user.tool_confirmation")
      .where(sql<string>`body->>'tool_use_id'`, "=", toolCallId)
      .where(sql<string>`body->>'result'`, "=", "allow")
      .limit(1)
      .executeTakeFirst(),
  );
  return row !== undefined;
}

export function postgresApprovals(db: Kysely<Database>): ApprovalCheck {
  return ({ tenantId, sessionId, toolCallId }) => hasCommittedAllow(db, tenantId, sessionId, toolCallId);
}
