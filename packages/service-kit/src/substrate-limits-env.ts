import { z } from "zod";

/**
 * The operator's bounds on agent substrates (/workspace/agent). The sandbox runner enforces them on
 * promotions and restores by tools, the gateway on restores through the API, so both read the same
 * variables: deploy both with the same values.
 */
export const SubstrateLimitsEnv = z.object({
  SUBSTRATE_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .default(1024 * 1024)
    .describe("One substrate file (text); a promotion of a larger workspace copy is refused"),
  SUBSTRATE_MAX_AGENT_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .default(16 * 1024 * 1024)
    .describe("The latest versions of all of one agent's substrate files; history versions do not count"),
});

export function substrateLimits(config: z.output<typeof SubstrateLimitsEnv>) {
  return { maxFileBytes: config.SUBSTRATE_MAX_FILE_BYTES, maxAgentBytes: config.SUBSTRATE_MAX_AGENT_BYTES };
}
