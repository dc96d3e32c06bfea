import { WakeloopError } from "@wakeloop/contracts";
import { parseSchedule } from "@wakeloop/session-core";
import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fireDueSchedules, tenantsWithDueSchedules } from "./schedule-firing";
import {
  cancelReminder,
  cancelScheduledTask,
  createReminder,
  createScheduledTask,
  getScheduledTask,
  listScheduledTasks,
  setScheduledTaskEnabled,
} from "./schedules";
import { readEvents } from "./session-queries";

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 8 });
});
afterAll(() => testDb.drop());

const NOW = new Date("2026-03-10T08:30:00Z");
const HOUR = 3_600_000;

function task(seeded: SeededAgent, overrides: { cron?: string; at?: string; maxPerAgent?: number } = {}) {
  const spec = parseSchedule(
    overrides.at ? { at: overrides.at } : { cron: overrides.cron ?? "0 * * * *" },
    NOW,
  );
  return createScheduledTask(testDb.appDb, {
    tenantId: seeded.tenantId,
    agentId: seeded.agentId,
    createdBySessionId: null,
    name: "hourly report",
    prompt: "write the report",
    spec,
    maxTotalTokens: 5_000,
    model: "fake-model-mini",
    now: NOW,
    maxPerAgent: overrides.maxPerAgent ?? 10,
  });
}

async function firingsOf(tenantId: string, scheduleId: string) {
  return testDb.db
    .selectFrom("schedule_firings")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("schedule_id", "=", scheduleId)
    .orderBy("occurrence_at")
    .execute();
}

describe("scheduled tasks", () => {
  it("are stored due at their next occurrence, listed, paused, resumed and cancelled", async () => {
    const seeded = await seedAgent(testDb.db);
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const created = await task(seeded);
    expect(created).toMatchObject({ kind: "task", cron: "0 * * * *", timezone: "UTC", enabled: true });
    expect(created.next_run_at).toEqual(new Date("2026-03-10T09:00:00Z"));

    const paused = await setScheduledTaskEnabled(testDb.appDb, scope, created.id, false, NOW);
    expect(paused?.enabled).toBe(false);
    expect(await listScheduledTasks(testDb.appDb, scope, { includeDisabled: false, limit: 10 })).toEqual([]);
    expect(await listScheduledTasks(testDb.appDb, scope, { includeDisabled: true, limit: 10 })).toHaveLength(
      1,
    );
    // Resumed three hours later: due at the next occurrence after then, not at the ones it slept through.
    const later = new Date("2026-03-10T11:10:00Z");
    const resumed = await setScheduledTaskEnabled(testDb.appDb, scope, created.id, true, later);
    expect(resumed?.next_run_at).toEqual(new Date("2026-03-10T12:00:00Z"));

    expect(await cancelScheduledTask(testDb.appDb, scope, created.id)).toBe(true);
    expect(await cancelScheduledTask(testDb.appDb, scope, created.id)).toBe(false);
    expect(await getScheduledTask(testDb.appDb, scope, created.id)).toBeNull();
  });

  it("refuses a task over the per-agent limit and stores nothing, even when created concurrently", async () => {
    const seeded = await seedAgent(testDb.db);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => task(seeded, { maxPerAgent: 4 })),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(4);
    for (const result of results.filter((r) => r.status === "rejected")) {
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(WakeloopError);
      expect(((result as PromiseRejectedResult).reason as WakeloopError).code).toBe("scheduled_task_limit");
    }
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    expect(await listScheduledTasks(testDb.appDb, scope, { includeDisabled: true, limit: 10 })).toHaveLength(
      4,
    );
  });

  it("never shows or changes another tenant's tasks", async () => {
    const mine = await seedAgent(testDb.db);
    const other = await seedAgent(testDb.db);
    const created = await task(mine);
    const intruder = { tenantId: other.tenantId, agentId: mine.agentId };
    expect(await getScheduledTask(testDb.appDb, intruder, created.id)).toBeNull();
    expect(await setScheduledTaskEnabled(testDb.appDb, intruder, created.id, false, NOW)).toBeNull();
    expect(await cancelScheduledTask(testDb.appDb, intruder, created.id)).toBe(false);
    const scope = { tenantId: mine.tenantId, agentId: mine.agentId };
    expect((await getScheduledTask(testDb.appDb, scope, created.id))?.enabled).toBe(true);
  });
});

describe("firing", () => {
  it("fires a cron occurrence once into a fresh session with the prompt, its model and a lowered budget", async () => {
    const seeded = await seedAgent(testDb.db);
    const created = await task(seeded);
    const at = new Date("2026-03-10T09:00:05Z");
    expect(await tenantsWithDueSchedules(testDb.appDb, at, 1_000)).toContain(seeded.tenantId);
    const firings = await fireDueSchedules(testDb.appDb, {
      tenantId: seeded.tenantId,
      now: at,
      limit: 10,
      catchUpWindowMs: HOUR,
    });
    expect(firings).toEqual([
      expect.objectContaining({ scheduleId: created.id, outcome: "fired", sessionId: expect.any(String) }),
    ]);
    const sessionId = firings[0]?.sessionId ?? "";
    const events = await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId });
    expect(events).toEqual([
      expect.objectContaining({
        type: "user.message",
        content: [{ type: "text", text: "write the report" }],
      }),
    ]);
    const session = await testDb.db
      .selectFrom("sessions")
      .selectAll()
      .where("id", "=", sessionId)
      .executeTakeFirstOrThrow();
    expect(session.model).toBe("fake-model-mini");
    expect(session.state).toMatchObject({
      title: "hourly report",
      budget: { max_total_tokens: 5_000 },
      metadata: { scheduled_task_id: created.id, scheduled_for: "2026-03-10T09:00:00.000Z" },
    });
    // Fired again at the same moment: nothing is due any more.
    expect(
      await fireDueSchedules(testDb.appDb, {
        tenantId: seeded.tenantId,
        now: at,
        limit: 10,
        catchUpWindowMs: HOUR,
      }),
    ).toEqual([]);
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    expect(await getScheduledTask(testDb.appDb, scope, created.id)).toMatchObject({
      next_run_at: new Date("2026-03-10T10:00:00Z"),
      last_run_at: at,
    });
  });

  it("fires each occurrence exactly once when many firers race over many due tasks", async () => {
    const seeded = await seedAgent(testDb.db);
    const ids = new Set<string>();
    for (let i = 0; i < 40; i += 1) ids.add((await task(seeded, { maxPerAgent: 100 })).id);
    const at = new Date("2026-03-10T09:00:01Z");
    const fire = () =>
      fireDueSchedules(testDb.appDb, { tenantId: seeded.tenantId, now: at, limit: 7, catchUpWindowMs: HOUR });
    const rounds = await Promise.all(
      Array.from({ length: 6 }, async () => [...(await fire()), ...(await fire())]),
    );
    const fired = rounds.flat().map((firing) => firing.scheduleId);
    const rest = await Promise.all(Array.from({ length: 6 }, fire));
    const all = [...fired, ...rest.flat().map((firing) => firing.scheduleId)];
    expect(all.sort()).toEqual([...ids].sort());
    const sessions = await testDb.db
      .selectFrom("sessions")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("tenant_id", "=", seeded.tenantId)
      .executeTakeFirstOrThrow();
    expect(Number(sessions.count)).toBe(40);
  });

  it("coalesces occurrences missed during downtime and skips ones past the catch-up window", async () => {
    const seeded = await seedAgent(testDb.db);
    const hourly = await task(seeded);
    const daily = await task(seeded, { cron: "0 9 * * *" });
    // Down from 08:30 until 12:20: hourly missed 09:00..12:00 (12:00 is in the window), daily's 09:00 is not.
    const back = new Date("2026-03-10T12:20:00Z");
    const firings = await fireDueSchedules(testDb.appDb, {
      tenantId: seeded.tenantId,
      now: back,
      limit: 10,
      catchUpWindowMs: HOUR,
    });
    expect(firings.map((f) => [f.scheduleId, f.outcome])).toEqual(
      expect.arrayContaining([
        [hourly.id, "fired"],
        [daily.id, "skipped"],
      ]),
    );
    expect(await firingsOf(seeded.tenantId, hourly.id)).toHaveLength(1);
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    expect((await getScheduledTask(testDb.appDb, scope, hourly.id))?.next_run_at).toEqual(
      new Date("2026-03-10T13:00:00Z"),
    );
    expect((await getScheduledTask(testDb.appDb, scope, daily.id))?.next_run_at).toEqual(
      new Date("2026-03-11T09:00:00Z"),
    );
  });

  it("finishes a one-shot task after its firing and skips a disabled one", async () => {
    const seeded = await seedAgent(testDb.db);
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const once = await task(seeded, { at: "2026-03-10T09:00:00Z" });
    const paused = await task(seeded, { at: "2026-03-10T09:00:00Z" });
    await setScheduledTaskEnabled(testDb.appDb, scope, paused.id, false, NOW);
    const at = new Date("2026-03-10T09:30:00Z");
    const firings = await fireDueSchedules(testDb.appDb, {
      tenantId: seeded.tenantId,
      now: at,
      limit: 10,
      catchUpWindowMs: HOUR,
    });
    expect(firings.map((f) => f.scheduleId)).toEqual([once.id]);
    expect((await getScheduledTask(testDb.appDb, scope, once.id))?.next_run_at).toBeNull();
  });
});

describe("reminders", () => {
  it("inject their message into their session once, and cannot be cancelled after", async () => {
    const seeded = await seedAgent(testDb.db);
    const session = await seedSession(testDb.db, seeded);
    const target = { tenantId: seeded.tenantId, agentId: seeded.agentId, sessionId: session.id };
    const reminder = await createReminder(testDb.appDb, {
      ...target,
      message: "check the build",
      at: new Date("2026-03-10T09:00:00Z"),
      maxPending: 2,
    });
    const dropped = await createReminder(testDb.appDb, {
      ...target,
      message: "never",
      at: new Date("2026-03-10T09:00:00Z"),
      maxPending: 2,
    });
    const full = createReminder(testDb.appDb, {
      ...target,
      message: "third",
      at: new Date("2026-03-10T09:00:00Z"),
      maxPending: 2,
    });
    await expect(full).rejects.toMatchObject({ code: "reminder_limit" });
    expect(await cancelReminder(testDb.appDb, { ...target, id: dropped.id })).toBe(true);
    expect(await cancelReminder(testDb.appDb, { ...target, id: dropped.id })).toBe(false);

    const at = new Date("2026-03-10T09:00:02Z");
    const firings = await fireDueSchedules(testDb.appDb, {
      tenantId: seeded.tenantId,
      now: at,
      limit: 10,
      catchUpWindowMs: HOUR,
    });
    expect(firings).toEqual([
      expect.objectContaining({ scheduleId: reminder.id, outcome: "fired", sessionId: session.id }),
    ]);
    const events = await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId: session.id });
    expect(events.map((event) => event.type)).toEqual(["user.message"]);
    expect(JSON.stringify(events[0])).toContain("check the build");
    expect(await cancelReminder(testDb.appDb, { ...target, id: reminder.id })).toBe(false);
  });

  it("into a terminated session are recorded as such, not delivered", async () => {
    const seeded = await seedAgent(testDb.db);
    const session = await seedSession(testDb.db, seeded);
    const reminder = await createReminder(testDb.appDb, {
      tenantId: seeded.tenantId,
      agentId: seeded.agentId,
      sessionId: session.id,
      message: "too late",
      at: new Date("2026-03-10T09:00:00Z"),
      maxPending: 1,
    });
    await testDb.db
      .updateTable("sessions")
      .set({ status: "terminated" })
      .where("id", "=", session.id)
      .execute();
    const firings = await fireDueSchedules(testDb.appDb, {
      tenantId: seeded.tenantId,
      now: new Date("2026-03-10T09:00:01Z"),
      limit: 10,
      catchUpWindowMs: HOUR,
    });
    expect(firings).toEqual([expect.objectContaining({ scheduleId: reminder.id, outcome: "session_ended" })]);
    expect(await readEvents(testDb.appDb, { tenantId: seeded.tenantId, sessionId: session.id })).toEqual([]);
  });
});
