import { WakeloopError } from "@wakeloop/contracts";

export type EgressErrorCode =
  | "egress_refused"
  | "egress_redirect_refused"
  | "egress_response_too_large"
  | "egress_timeout";

export interface EgressErrorDetails {
  host?: string;
  address?: string;
  /** The address class that was refused (`loopback`, `private`, `ipv4Mapped loopback`, …). */
  range?: string;
  limit?: number;
}

/**
 * A request the egress guard stopped. Its message names the host, the address and the rule, never
 * anything the remote side sent, so it is safe to show a tenant. Only a timeout is worth retrying.
 */
export class EgressError extends WakeloopError {
  declare readonly code: EgressErrorCode;
  declare readonly details: EgressErrorDetails;

  constructor(code: EgressErrorCode, message: string, details: EgressErrorDetails = {}) {
    super(code, message, { retryable: code === "egress_timeout", details });
    this.name = "EgressError";
  }
}

/** The EgressError somewhere in `error`'s cause chain: SDKs and fetch wrap what a dispatcher threw. */
export function findEgressError(error: unknown): EgressError | undefined {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    if (current instanceof EgressError) return current;
    seen.add(current);
  }
  return undefined;
}
