import { WakeloopError } from "@wakeloop/contracts";
import { Cron } from "croner";

/*
 * When a reminder or a scheduled task fires: pure functions of the schedule and an injected `now`
 * (no clock read here), shared by the tools, the API and the orchestrator so they agree on what is
 * valid and when it is due. Cron expressions are parsed by croner (5 fields, or 6 with seconds).
 */

/** A one-shot time or a cron expression read in an IANA time zone. */
export type ScheduleSpec = { kind: "once"; at: Date } | { kind: "cron"; cron: string; timezone: string };

/** The input both tools and API take: exactly one of `at` (ISO 8601) or `cron` (+ optional `timezone`). */
export interface ScheduleInput {
  at?: string | undefined;
  cron?: string | undefined;
  timezone?: string | undefined;
}

function invalid(message: string, details: Record<string, unknown>): WakeloopError {
  return new WakeloopError("invalid_request", message, { details });
}

/** True when the runtime knows the IANA zone (Intl throws a RangeError for an unknown one). */
export function isKnownTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** An ISO 8601 instant with an explicit offset or `Z`; a local time without a zone is ambiguous. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Reads a one-shot time: ISO 8601 with an offset, after `now`; `invalid_request` otherwise. */
export function parseOneShot(text: string, now: Date): Date {
  const at = new Date(text);
  if (!ISO_INSTANT.test(text) || Number.isNaN(at.getTime())) {
    throw invalid("`at` must be an ISO 8601 time with an offset, e.g. 2026-02-25T09:00:00Z", { at: text });
  }
  if (at.getTime() <= now.getTime()) {
    throw invalid(`\`at\` ${text} is in the past (now is ${now.toISOString()})`, {
      at: text,
      now: now.toISOString(),
    });
  }
  return at;
}

/**
 * Reads `{at}` or `{cron, timezone}` and checks it can fire after `now`. Throws `invalid_request` with
 * a message saying what to change: both or neither given, a malformed time, a time not after `now`,
 * an invalid cron expression, an unknown time zone, or a cron expression that never fires again.
 */
export function parseSchedule(input: ScheduleInput, now: Date): ScheduleSpec {
  if ((input.at === undefined) === (input.cron === undefined)) {
    throw invalid("give exactly one of `at` (one-shot, ISO 8601) or `cron` (recurring)", {});
  }
  if (input.at !== undefined) {
    if (input.timezone !== undefined) {
      throw invalid("`timezone` goes with `cron`; give `at` with its offset instead", { at: input.at });
    }
    return { kind: "once", at: parseOneShot(input.at, now) };
  }
  const cron = (input.cron ?? "").trim();
  const timezone = input.timezone ?? "UTC";
  if (!isKnownTimeZone(timezone)) {
    throw invalid(`unknown time zone ${timezone}; use an IANA name such as Europe/Paris or UTC`, {
      timezone,
    });
  }
  let next: Date | null;
  try {
    next = new Cron(cron, { timezone, paused: true }).nextRun(now);
  } catch (cause) {
    throw new WakeloopError(
      "invalid_request",
      `invalid cron expression "${cron}": ${cause instanceof Error ? cause.message : String(cause)}`,
      { details: { cron }, cause },
    );
  }
  if (next === null) throw invalid(`cron expression "${cron}" never fires after now`, { cron });
  return { kind: "cron", cron, timezone };
}

/** The first firing strictly after `after`, or null when the schedule has none left. */
export function nextOccurrence(spec: ScheduleSpec, after: Date): Date | null {
  if (spec.kind === "once") return spec.at.getTime() > after.getTime() ? spec.at : null;
  return new Cron(spec.cron, { timezone: spec.timezone, paused: true }).nextRun(after);
}

/** What the orchestrator does with an occurrence that came due at `dueAt` and is seen at `now`. */
export interface FiringDecision {
  /** Fire now for the occurrence `dueAt` (false: the occurrence is skipped). */
  fire: boolean;
  /** When the schedule is due next; null when it is finished (one-shot fired or nothing left). */
  nextRunAt: Date | null;
}

/**
 * The catch-up policy for firings missed while no orchestrator ran (docs/scheduling.md):
 * - one-shots (reminders, `at` tasks) always fire, late if need be: a message someone asked for is
 *   delivered, never dropped;
 * - a cron task fires at most once however many occurrences it missed (they coalesce into the latest
 *   one), and only if that occurrence is at most `catchUpWindowMs` old; older ones are skipped. Either
 *   way it is next due at its first occurrence after `now`, so a restart never causes a burst.
 */
export function decideFiring(
  spec: ScheduleSpec,
  dueAt: Date,
  now: Date,
  catchUpWindowMs: number,
): FiringDecision {
  if (spec.kind === "once") return { fire: true, nextRunAt: null };
  // Some occurrence in [now - window, now] exists when the due one is inside the window or when the
  // first occurrence after the window's start is not after now (`dueAt` is always an occurrence).
  const windowStart = now.getTime() - catchUpWindowMs;
  const inWindow =
    dueAt.getTime() >= windowStart ||
    (nextOccurrence(spec, new Date(windowStart - 1))?.getTime() ?? Number.POSITIVE_INFINITY) <= now.getTime();
  return { fire: inWindow, nextRunAt: nextOccurrence(spec, now) };
}
