import type { ToolPolicy } from "@wakeloop/contracts";
import type { RetryPolicy } from "../model/call-model";

export interface WakeSettings {
  workerId: string;
  leaseTtlMs: number;
  /** Model requests one wake may make before it yields (the session stays idle with end_turn). */
  maxModelRequestsPerWake: number;
  retry: RetryPolicy;
  /** The platform's tool policy, first in the pipeline after profiles. */
  globalToolPolicy: ToolPolicy;
  maxSubSessionDepth: number;
}
