import type { Client } from "../api";

/** A part of the session page that reads its data again whenever `refreshKey` changes. */
export interface SessionPartProps {
  client: Client;
  sessionId: string;
  /** The seq of the session's latest status event. */
  refreshKey: number;
}
