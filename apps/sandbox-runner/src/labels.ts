import { createHash } from "node:crypto";

// Every container and volume the runner makes carries these labels, so a restarted runner can find
// all of its objects and adopt or remove each one (nothing leaks).

export const LABEL = {
  runner: "wakeloop.runner",
  session: "wakeloop.session",
  tenant: "wakeloop.tenant",
  pool: "wakeloop.pool",
  kind: "wakeloop.kind",
  agentVersion: "wakeloop.agent-version",
} as const;

/** Docker names and file names allow few characters; session ids are hashed into a fixed key. */
export function sessionKey(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("hex").slice(0, 24);
}

export function sessionContainerName(runnerId: string, sessionId: string): string {
  return `wl-${runnerId}-s-${sessionKey(sessionId)}`;
}
