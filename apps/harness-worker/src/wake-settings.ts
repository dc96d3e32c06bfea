import type { PlatformToolSettings } from "@wakeloop/tool-runtime";
import type { RetryPolicy } from "./model/call-model";

export interface WakeSettings extends PlatformToolSettings {
  workerId: string;
  leaseTtlMs: number;
  /** Model requests one wake may make before it yields (the session stays idle with end_turn). */
  maxModelRequestsPerWake: number;
  retry: RetryPolicy;
}
