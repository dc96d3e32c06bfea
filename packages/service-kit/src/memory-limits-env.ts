import { z } from "zod";

/**
 * The operator's bounds on memory stores. The memory service enforces them on tool writes and the
 * gateway on people's writes through the API, so both read the same variables: deploy both with the
 * same values.
 */
export const MemoryLimitsEnv = z.object({
  MEMORY_MAX_ENTRY_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .default(64 * 1024)
    .describe("One memory entry or skill; keeps what a read puts into the model's context bounded"),
  MEMORY_MAX_STORE_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .default(4 * 1024 * 1024)
    .describe("All live entries of one store of one agent; history versions do not count"),
});

export function memoryLimits(config: z.output<typeof MemoryLimitsEnv>) {
  return { maxEntryBytes: config.MEMORY_MAX_ENTRY_BYTES, maxStoreBytes: config.MEMORY_MAX_STORE_BYTES };
}
