import { EventPayload, SessionState, WakeloopError } from "@wakeloop/contracts";
import type { z } from "zod";

/**
 * Reads a JSON column through its schema (invariant 8). A row that no longer matches is a bug or a
 * missed migration, not bad input, so it fails loudly and retrying cannot help.
 */
export function readJson<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new WakeloopError("stored_json_invalid", `stored ${what} does not match its schema`, {
      cause: parsed.error,
      details: { issues: parsed.error.issues },
    });
  }
  return parsed.data;
}

export function readSessionState(value: unknown): SessionState {
  return readJson(SessionState, value, "session state");
}

export function readEventPayload(value: unknown): EventPayload {
  return readJson(EventPayload, value, "event body");
}
