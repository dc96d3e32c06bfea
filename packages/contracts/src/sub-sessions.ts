import { z } from "zod";

/**
 * `wait_for_sessions`'s input, in contracts since the orchestrator reads it back from the parent's
 * pending action to answer it.
 */
export const WaitForSessionsInput = z.object({
  ids: z.array(z.string().min(1).max(128)).min(1).max(100).describe("Sub-session IDs to wait for"),
});
export type WaitForSessionsInput = z.infer<typeof WaitForSessionsInput>;
