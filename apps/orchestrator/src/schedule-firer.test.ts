import { createScheduledTask } from "@wakeloop/db";
import { parseSchedule } from "@wakeloop/session-core";
import { createLogger } from "@wakeloop/telemetry";
import { createTestDatabase, type SeededAgent, seedAgent, type TestDatabase } from "@wakeloop/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fireSchedulesOnce } from "./schedule-firer";

// Against real Postgres, through the app role that row-level security binds, as in production.

let database: TestDatabase;
const log = createLogger({ service: "schedule-firer-test", level: "silent" });
const NOW = new Date("2026-03-10T08:30:00Z");

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

async function seedTasks(seeded: SeededAgent, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await createScheduledTask(database.appDb, {
      tenantId: seeded.tenantId,
      agentId: seeded.agentId,
      createdBySessionId: null,
      name: `task ${i}`,
      prompt: "go",
      spec: parseSchedule({ cron: "0 * * * *" }, NOW),
      maxTotalTokens: null,
      now: NOW,
      maxPerAgent: 100,
    });
  }
}

describe("fireSchedulesOnce", () => {
  it("drains every tenant's due schedules in batches, and fires nothing twice", async () => {
    const first = await seedAgent(database.db);
    const second = await seedAgent(database.db);
    await seedTasks(first, 7);
    await seedTasks(second, 3);
    const options = { batchSize: 2, concurrency: 3, catchUpWindowMs: 3_600_000 };
    const due = new Date("2026-03-10T09:00:01Z");
    expect(await fireSchedulesOnce({ db: database.appDb, log }, options, due)).toBe(10);
    expect(await fireSchedulesOnce({ db: database.appDb, log }, options, due)).toBe(0);
    const sessions = await database.db.selectFrom("sessions").select(["tenant_id"]).execute();
    expect(sessions.filter((s) => s.tenant_id === first.tenantId)).toHaveLength(7);
    expect(sessions.filter((s) => s.tenant_id === second.tenantId)).toHaveLength(3);
  });
});
