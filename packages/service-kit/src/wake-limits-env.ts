import { z } from "zod";

/**
 * How many wakes a tenant may have in flight. The orchestrator publishes held wakes within it, and the
 * gateway opens the wake a client's event needs in the event's own commit and publishes it within it
 * too, so both read it from the same variable: deploy both with the same value.
 */
export const WakeLimitsEnv = z.object({
  WAKES_IN_FLIGHT_PER_TENANT: z.coerce
    .number()
    .int()
    .min(1)
    .default(16)
    .describe(
      "Wake jobs one tenant may have published or running at once; the rest wait in Postgres, in order",
    ),
});
