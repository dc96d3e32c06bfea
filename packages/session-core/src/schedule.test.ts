import { WakeloopError } from "@wakeloop/contracts";
import { describe, expect, it } from "vitest";
import { decideFiring, nextOccurrence, parseSchedule } from "./schedule";

const NOW = new Date("2026-03-10T08:30:00Z");
const HOUR = 3_600_000;

function rejection(run: () => unknown): WakeloopError {
  try {
    run();
  } catch (error) {
    if (error instanceof WakeloopError) return error;
    throw error;
  }
  throw new Error("expected a WakeloopError");
}

describe("parseSchedule", () => {
  it("reads a one-shot time with an offset and a cron expression in a time zone", () => {
    expect(parseSchedule({ at: "2026-03-10T10:00:00+01:00" }, NOW)).toEqual({
      kind: "once",
      at: new Date("2026-03-10T09:00:00Z"),
    });
    expect(parseSchedule({ cron: " 0 9 * * MON ", timezone: "Europe/Paris" }, NOW)).toEqual({
      kind: "cron",
      cron: "0 9 * * MON",
      timezone: "Europe/Paris",
    });
    expect(parseSchedule({ cron: "*/5 * * * *" }, NOW)).toMatchObject({ timezone: "UTC" });
  });

  it("refuses what cannot fire, saying what to change", () => {
    const cases: [Parameters<typeof parseSchedule>[0], RegExp][] = [
      [{}, /exactly one of/],
      [{ at: "2026-03-11T00:00:00Z", cron: "* * * * *" }, /exactly one of/],
      [{ at: "2026-03-10T08:29:59Z" }, /in the past/],
      [{ at: "2026-03-10T08:30:00Z" }, /in the past/],
      [{ at: "tomorrow" }, /ISO 8601/],
      [{ at: "2026-03-11T09:00:00" }, /offset/],
      [{ at: "2026-03-11T09:00:00Z", timezone: "UTC" }, /`timezone` goes with `cron`/],
      [{ cron: "61 * * * *" }, /invalid cron expression "61 \* \* \* \*"/],
      [{ cron: "every day" }, /invalid cron expression/],
      [{ cron: "0 9 * * *", timezone: "Mars/Olympus" }, /unknown time zone Mars\/Olympus/],
    ];
    for (const [input, message] of cases) {
      const error = rejection(() => parseSchedule(input, NOW));
      expect(error.code).toBe("invalid_request");
      expect(error.message).toMatch(message);
    }
  });
});

describe("nextOccurrence", () => {
  it("follows the time zone, including across a daylight saving change", () => {
    const spec = parseSchedule({ cron: "0 9 * * *", timezone: "Europe/Paris" }, NOW);
    // 09:00 in Paris is 08:00Z in winter (CET) and 07:00Z after the switch on 29 March (CEST).
    expect(nextOccurrence(spec, NOW)).toEqual(new Date("2026-03-11T08:00:00Z"));
    expect(nextOccurrence(spec, new Date("2026-03-29T12:00:00Z"))).toEqual(new Date("2026-03-30T07:00:00Z"));
  });

  it("gives a one-shot time once", () => {
    const spec = parseSchedule({ at: "2026-03-10T09:00:00Z" }, NOW);
    expect(nextOccurrence(spec, NOW)).toEqual(new Date("2026-03-10T09:00:00Z"));
    expect(nextOccurrence(spec, new Date("2026-03-10T09:00:00Z"))).toBeNull();
  });
});

describe("decideFiring (catch-up policy)", () => {
  const hourly = parseSchedule({ cron: "0 * * * *" }, NOW);

  it("fires an occurrence on time and moves to the next one", () => {
    const due = new Date("2026-03-10T09:00:00Z");
    expect(decideFiring(hourly, due, new Date("2026-03-10T09:00:01Z"), HOUR)).toEqual({
      fire: true,
      nextRunAt: new Date("2026-03-10T10:00:00Z"),
    });
  });

  it("coalesces occurrences missed during downtime into one firing, then resumes after now", () => {
    const due = new Date("2026-03-10T02:00:00Z");
    // Down from 02:00 to 08:30: 02:00 is long past the window, but 08:00 is inside it.
    expect(decideFiring(hourly, due, NOW, HOUR)).toEqual({
      fire: true,
      nextRunAt: new Date("2026-03-10T09:00:00Z"),
    });
  });

  it("skips occurrences older than the catch-up window", () => {
    const daily = parseSchedule({ cron: "0 6 * * *" }, NOW);
    const due = new Date("2026-03-10T06:00:00Z");
    expect(decideFiring(daily, due, NOW, HOUR)).toEqual({
      fire: false,
      nextRunAt: new Date("2026-03-11T06:00:00Z"),
    });
  });

  it("always delivers a one-shot, late if need be, and finishes it", () => {
    const once = parseSchedule({ at: "2026-03-10T09:00:00Z" }, NOW);
    expect(
      decideFiring(once, new Date("2026-03-10T09:00:00Z"), new Date("2026-03-12T00:00:00Z"), HOUR),
    ).toEqual({ fire: true, nextRunAt: null });
  });
});
