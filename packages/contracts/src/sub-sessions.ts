import { z } from "zod";

/**
 * `wait_for_sessions`'s input, in contracts since the orchestrator reads it back from the parent's
 * pending action to answer it.
 */
export const WaitForSessionsInput = z.object({
  ids: z.array(z.string().min(1).max(128)).min(1).max(100).describe("Sub-session IDs to wait for"),
});
export type WaitForSessionsInput = z.infer<typeof WaitForSessionsInput>;

/** Model requests a `session_run_child` run allows when the call names none, and at most. */
export const RUN_CHILD_CYCLES = { default: 3, max: 10 } as const;

/**
 * `session_run_child`'s input (openboa): advance a direct sub-session for a few bounded cycles (model
 * requests) and wait for it. In contracts since the orchestrator reads it back from the pending action
 * to start and answer the run.
 */
export const SessionRunChildInput = z.object({
  session_id: z
    .string()
    .min(1)
    .max(128)
    .describe("A direct sub-session of this session that has not finished"),
  message: z
    .string()
    .min(1)
    .max(100_000)
    .optional()
    .describe(
      "A message for it first (a user message). Without one, an idle sub-session is told to continue",
    ),
  max_cycles: z
    .number()
    .int()
    .min(1)
    .max(RUN_CHILD_CYCLES.max)
    .default(RUN_CHILD_CYCLES.default)
    .describe(
      `Model requests it may make in this run (default ${RUN_CHILD_CYCLES.default}, at most ${RUN_CHILD_CYCLES.max})`,
    ),
});
export type SessionRunChildInput = z.infer<typeof SessionRunChildInput>;
