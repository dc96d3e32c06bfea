import { type Database, getSession } from "@wakeloop/db";
import type { SandboxClient } from "@wakeloop/sandbox-client";
import type { Logger } from "@wakeloop/telemetry";
import type { Kysely } from "kysely";

export interface SandboxReleaseDeps {
  db: Kysely<Database>;
  /** Null when no sandbox-runner is deployed: there is nothing to release then. */
  sandbox: SandboxClient | null;
  log: Logger;
}

/**
 * Removes a terminated session's container, workspace volume and runner records (DESIGN §6). Only
 * sessions with an environment ever had a sandbox; a runner that holds nothing for the session answers
 * `released: false`, which is fine (it never provisioned, or an earlier delivery already released).
 * A failure (runner down: no responders; hung: the client's release timeout) is thrown, so the events
 * consumer redelivers with backoff until its `maxDeliver`, then dead-letters the event for an operator.
 */
export async function releaseSandbox(
  deps: SandboxReleaseDeps,
  target: { tenantId: string; sessionId: string },
  deliveryCount: number,
): Promise<void> {
  if (deps.sandbox === null) return;
  const session = await getSession(deps.db, target.tenantId, target.sessionId);
  if (session?.environment_id == null) return;
  const log = deps.log.child({ session_id: target.sessionId });
  try {
    const { released } = await deps.sandbox.release(target.sessionId, target.tenantId);
    log.info({ released }, released ? "sandbox released" : "no sandbox to release");
  } catch (err) {
    log.warn({ err, delivery: deliveryCount }, "sandbox release failed; the event will be redelivered");
    throw err;
  }
}
