import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { createDb, type Database, newId } from "@wakeloop/db";
import { createLogger } from "@wakeloop/telemetry";
import { createTestDatabase, round2 as round, seedAgent, type TestDatabase } from "@wakeloop/testing";
import type { Kysely } from "kysely";
import { fireSchedulesOnce } from "../apps/orchestrator/src/schedule-firer";

/*
 * Scheduled tasks due in the same minute (issue #11): how long until every one has fired, and that
 * each fired once.   npx tsx bench/schedule-bench.ts [tasks]
 * The tasks (cron, every minute) are all due at one instant, the worst case of "the same minute". The
 * orchestrator's firing loop (`fireSchedulesOnce`, its default batch size and concurrency) runs
 * in-process as one replica and then as two, each replica with its own connection pool, polling every
 * 100 ms like SCHEDULE_POLL_INTERVAL_MS would. A firing is the whole durable effect: the task's row
 * locked, a fresh session, its user.message with outbox row, the occurrence record and the next due
 * time, committed per batch. Waking those sessions (watcher, workers) is measured by the session bench.
 */

export interface ScheduleBenchOptions {
  tasks?: number;
  batchSize?: number;
  concurrency?: number;
}

export interface ScheduleRun {
  replicas: number;
  tasks: number;
  /** From the instant they were due until the last firing committed. */
  allFiredAfterMs: number;
  firingsPerSecond: number;
  /** Firings committed by each replica. */
  perReplica: number[];
  /** Occurrence records, distinct tasks fired, sessions created: all equal `tasks` when each fired once. */
  firings: number;
  distinctTasks: number;
  sessions: number;
}

const POLL_MS = 100;

async function seedTasks(testDb: TestDatabase, tasks: number, dueAt: Date) {
  const seeded = await seedAgent(testDb.db);
  for (let offset = 0; offset < tasks; offset += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, tasks - offset) }, (_, index) => ({
      id: newId("scheduledTask"),
      tenant_id: seeded.tenantId,
      agent_id: seeded.agentId,
      kind: "task" as const,
      name: `task ${offset + index}`,
      prompt: "run the report",
      cron: "* * * * *",
      timezone: "UTC",
      next_run_at: dueAt,
    }));
    await testDb.db.insertInto("schedules").values(rows).execute();
  }
  return seeded;
}

async function run(testDb: TestDatabase, replicas: number, options: Required<ScheduleBenchOptions>) {
  const dueAt = new Date(Date.now() + 2_000);
  const seeded = await seedTasks(testDb, options.tasks, dueAt);
  const pools: Kysely<Database>[] = Array.from({ length: replicas }, () =>
    createDb({ url: testDb.appUrl, max: options.concurrency + 2 }),
  );
  const log = createLogger({ service: "schedule-bench", level: "silent" });
  const perReplica = pools.map(() => 0);
  const stop = new AbortController();
  let lastFiredAt = 0;
  const loops = pools.map(async (db, replica) => {
    while (!stop.signal.aborted) {
      const fired = await fireSchedulesOnce(
        { db, log },
        { batchSize: options.batchSize, concurrency: options.concurrency, catchUpWindowMs: 3_600_000 },
        new Date(),
      );
      if (fired > 0) {
        perReplica[replica] = (perReplica[replica] ?? 0) + fired;
        lastFiredAt = Date.now();
      }
      await sleep(POLL_MS);
    }
  });
  const fired = () => perReplica.reduce((sum, count) => sum + count, 0);
  while (fired() < options.tasks) await sleep(20);
  stop.abort();
  await Promise.all(loops);
  await Promise.all(pools.map((db) => db.destroy()));

  const count = async (table: "schedule_firings" | "sessions", column: "schedule_id" | "id") => {
    const row = await testDb.db
      .selectFrom(table)
      .select((eb) => [
        eb.fn.countAll<number>().as("all"),
        eb.fn.count<number>(column).distinct().as("distinct"),
      ])
      .where("tenant_id", "=", seeded.tenantId)
      .executeTakeFirstOrThrow();
    return { all: Number(row.all), distinct: Number(row.distinct) };
  };
  // Every minute they are due again: paused, so the next run fires only its own tasks.
  await testDb.db
    .updateTable("schedules")
    .set({ enabled: false })
    .where("tenant_id", "=", seeded.tenantId)
    .execute();
  const firings = await count("schedule_firings", "schedule_id");
  const sessions = await count("sessions", "id");
  const allFiredAfterMs = lastFiredAt - dueAt.getTime();
  return {
    replicas,
    tasks: options.tasks,
    allFiredAfterMs: round(allFiredAfterMs),
    firingsPerSecond: round(options.tasks / (allFiredAfterMs / 1000)),
    perReplica,
    firings: firings.all,
    distinctTasks: firings.distinct,
    sessions: sessions.all,
  } satisfies ScheduleRun;
}

export async function runScheduleBench(
  options: ScheduleBenchOptions = {},
): Promise<{ oneReplica: ScheduleRun; twoReplicas: ScheduleRun }> {
  const resolved = { tasks: 10_000, batchSize: 100, concurrency: 4, ...options };
  const testDb = await createTestDatabase({ max: 4 });
  try {
    // Each run seeds its own tenant, so the second fires only its own tasks.
    return { oneReplica: await run(testDb, 1, resolved), twoReplicas: await run(testDb, 2, resolved) };
  } finally {
    await testDb.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const tasks = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
  runScheduleBench(tasks === undefined ? {} : { tasks }).then(
    (result) => {
      console.log(JSON.stringify(result, null, 2));
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
