import { findIllFormedText, toWellFormedText, WakeloopError } from "@wakeloop/contracts";

/**
 * Refuses a NUL character or a lone surrogate anywhere in a request's path parameters, query string or
 * body, with a 400 naming where. Postgres cannot store either, so letting one through would fail the
 * statement later as a 500, or worse, be stored where a later read or wake trips over it.
 */
export function requireWellFormedInput(input: { params: unknown; query: unknown; body: unknown }): void {
  for (const [where, value] of [
    ["path", input.params],
    ["query string", input.query],
    ["body", input.body],
  ] as const) {
    const path = findIllFormedText(value);
    if (path === null) continue;
    // The path itself may hold the bad key; the answer must not echo it back.
    const named = toWellFormedText(path);
    const at = named.length === 0 ? where : `${where} at ${named.join(".")}`;
    throw new WakeloopError(
      "invalid_request",
      `invalid ${where}: ${at} holds a NUL character or an unpaired surrogate, which the API does not accept`,
      { details: { where, path: named } },
    );
  }
}
