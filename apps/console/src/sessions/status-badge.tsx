import type { Session } from "@wakeloop/contracts";

/** The status as a person reads it: idle is split by why the session stopped. */
export function statusText(session: Pick<Session, "status" | "stop_reason" | "termination_reason">): string {
  if (session.status === "terminated") return `terminated (${session.termination_reason ?? "unknown"})`;
  if (session.status !== "idle" || session.stop_reason === null) return session.status;
  return session.stop_reason.type === "requires_action"
    ? "waiting on approval"
    : `idle (${session.stop_reason.type})`;
}

export function StatusBadge({ session }: { session: Session }) {
  const text = statusText(session);
  return <span className={`badge badge-${text.split(" ")[0]}`}>{text}</span>;
}
