import {
  createTestDatabase,
  type SeededAgent,
  seedAgent,
  seedSession,
  type TestDatabase,
} from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTimeTool, type TimeToolScope } from "./time-tools";
import type { ToolOutcome } from "./tool-outcome";

let testDb: TestDatabase;
let seeded: SeededAgent;
let scope: TimeToolScope;

const NOW = new Date("2026-03-10T08:30:00Z");

beforeAll(async () => {
  testDb = await createTestDatabase({ max: 4 });
  seeded = await seedAgent(testDb.db);
  const session = await seedSession(testDb.db, seeded);
  scope = { tenantId: seeded.tenantId, agentId: seeded.agentId, sessionId: session.id };
});
afterAll(() => testDb.drop());

async function call(name: string, input: Record<string, unknown>): Promise<ToolOutcome | null> {
  return runTimeTool(
    testDb.appDb,
    scope,
    { name, input },
    {
      now: NOW,
      agentModel: { provider: "anthropic", id: "claude-sonnet-4-5" },
      maxTasksPerAgent: 2,
      maxRemindersPerSession: 1,
    },
  );
}

/** The id in a call's result; fails the test when the call returned nothing. */
function idOf(outcome: ToolOutcome | null): string {
  if (outcome === null) throw new Error("the tool returned no outcome");
  return (outcome.result as { id: string }).id;
}

const stored = async () =>
  (await testDb.db.selectFrom("schedules").select("id").where("agent_id", "=", seeded.agentId).execute())
    .length;

describe("time tools", () => {
  it("set and cancel a reminder of the calling session", async () => {
    const set = await call("set_reminder", { at: "2026-03-10T10:00:00+01:00", message: "stand up" });
    expect(set?.isError).toBe(false);
    expect(set?.result).toEqual({ id: expect.stringMatching(/^rmd_/), at: "2026-03-10T09:00:00.000Z" });
    const id = idOf(set);
    const second = await call("set_reminder", { at: "2026-03-10T11:00:00Z", message: "one too many" });
    expect(second?.isError).toBe(true);
    expect(JSON.stringify(second?.content)).toMatch(/already has 1 reminders waiting/);
    expect((await call("cancel_reminder", { id }))?.result).toEqual({ deleted: true });
    expect((await call("cancel_reminder", { id }))?.result).toEqual({ deleted: false });
  });

  it("answer a schedule that cannot fire with an error result and store nothing", async () => {
    const before = await stored();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["set_reminder", { at: "2026-03-10T08:00:00Z", message: "late" }, /in the past/],
      ["create_scheduled_task", { name: "n", task: "t", cron: "0 9 * *" }, /invalid cron expression/],
      [
        "create_scheduled_task",
        { name: "n", task: "t", cron: "0 9 * * *", timezone: "Moon/Base" },
        /unknown time zone/,
      ],
      ["create_scheduled_task", { name: "n", task: "t" }, /exactly one of/],
      [
        "create_scheduled_task",
        { name: "n", task: "t", cron: "0 9 * * *", model: "gpt-4.1-mini" },
        /not a model of anthropic/,
      ],
      [
        "create_scheduled_task",
        { name: "n", task: "t", cron: "0 9 * * *", model: "openai/gpt-4.1-mini" },
        /this agent talks to anthropic/,
      ],
    ];
    for (const [name, input, message] of cases) {
      const outcome = await call(name, input);
      expect(outcome?.isError, name).toBe(true);
      expect(JSON.stringify(outcome?.content)).toMatch(message);
    }
    expect(await stored()).toBe(before);
  });

  it("create, list, pause, resume and cancel tasks up to the agent's limit", async () => {
    const created = await call("create_scheduled_task", {
      name: "standup notes",
      task: "collect notes",
      cron: "0 9 * * MON-FRI",
      timezone: "Europe/Paris",
    });
    expect(created?.result).toEqual({
      id: expect.stringMatching(/^stask_/),
      name: "standup notes",
      next_run: "2026-03-11T08:00:00.000Z",
    });
    const id = idOf(created);
    const once = await call("create_scheduled_task", {
      name: "once",
      task: "x",
      at: "2026-04-01T00:00:00Z",
      model: "claude-haiku-4-5",
    });
    expect(once?.isError).toBe(false);
    const over = await call("create_scheduled_task", {
      name: "third",
      task: "x",
      at: "2026-04-01T00:00:00Z",
    });
    expect(over?.isError).toBe(true);
    expect(JSON.stringify(over?.content)).toMatch(/limit/);

    expect((await call("disable_scheduled_task", { id }))?.result).toEqual({ id, enabled: false });
    const listed = (await call("list_scheduled_tasks", {}))?.result as { tasks: { id: string }[] };
    expect(listed.tasks.map((task) => task.id)).not.toContain(id);
    const all = (await call("list_scheduled_tasks", { include_disabled: true }))?.result as {
      tasks: unknown[];
    };
    expect(all.tasks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id, type: "cron", enabled: false, created_by_session_id: scope.sessionId }),
        expect.objectContaining({ id: idOf(once), type: "once", model: "claude-haiku-4-5" }),
      ]),
    );
    expect((await call("enable_scheduled_task", { id }))?.result).toEqual({ id, enabled: true });
    expect((await call("cancel_scheduled_task", { id }))?.result).toEqual({ deleted: true });
    expect((await call("enable_scheduled_task", { id }))?.isError).toBe(true);
    expect(await call("get_state", { key: "k" })).toBeNull();
  });
});
