import { WakeloopError } from "@wakeloop/contracts";
import { z } from "zod";

/** Parses request input through its schema (invariant 8); a mismatch is a 400 with the zod issues. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new WakeloopError("invalid_request", `invalid ${where}: ${z.prettifyError(parsed.error)}`, {
    details: { issues: parsed.error.issues },
  });
}
