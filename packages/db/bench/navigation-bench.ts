import { pathToFileURL } from "node:url";
import {
  append,
  createSession,
  findAgentSession,
  listAgentSessions,
  type NewEvent,
  readEvents,
  sessionHistoryChars,
} from "@wakeloop/db";
import {
  createTestDatabase,
  type LatencySummary,
  measureLatency,
  type SeededAgent,
  seedAgent,
  type TestDatabase,
} from "@wakeloop/testing";

/*
 * The session navigation tools' reads on a real Postgres, in a throwaway database:
 *   npx tsx packages/db/bench/navigation-bench.ts
 * One agent with many sessions (a tenth of them children of one parent, a tenth with an outcome), each
 * with a short history; every read runs as the services' role, so row security is on the path.
 */

export interface NavigationBenchOptions {
  sessions?: number;
  eventsPerSession?: number;
  /** Calls of each read. */
  iterations?: number;
}

export interface NavigationBenchResult {
  sessions: number;
  eventsPerSession: number;
  latencyMs: Record<string, LatencySummary>;
}

const message = (index: number): NewEvent => ({
  type: "agent.message",
  content: [{ type: "text", text: `step ${index}: ${"lorem ipsum ".repeat(12)}` }],
});

async function seedSessions(testDb: TestDatabase, seeded: SeededAgent, count: number, events: number) {
  const base = {
    tenantId: seeded.tenantId,
    agentId: seeded.agentId,
    agentVersion: seeded.agentVersion,
    environmentId: null,
    title: "bench",
    metadata: {},
    budget: { max_total_tokens: null },
  };
  const parent = await createSession(testDb.appDb, { ...base, parentSessionId: null });
  const ids: string[] = [];
  // Sixteen writers at a time: seeding is not what is measured.
  for (let start = 1; start < count; start += 16) {
    const batch = Array.from({ length: Math.min(16, count - start) }, async (_, offset) => {
      const index = start + offset;
      const session = await createSession(testDb.appDb, {
        ...base,
        parentSessionId: index % 10 === 0 ? parent.id : null,
      });
      const history = Array.from({ length: events }, (_, n) => message(n));
      if (index % 10 === 5) history.push({ type: "user.define_outcome", description: "ship it" });
      await append(testDb.appDb, { tenantId: seeded.tenantId, sessionId: session.id, events: history });
      ids.push(session.id);
    });
    await Promise.all(batch);
  }
  return { parentId: parent.id, ids };
}

export async function runNavigationBench(
  options: NavigationBenchOptions = {},
): Promise<NavigationBenchResult> {
  const sessions = options.sessions ?? 1_000;
  const eventsPerSession = options.eventsPerSession ?? 20;
  const iterations = options.iterations ?? 200;
  const testDb = await createTestDatabase({ max: 10 });
  try {
    const seeded = await seedAgent(testDb.db);
    const { parentId, ids } = await seedSessions(testDb, seeded, sessions, eventsPerSession);
    const db = testDb.appDb;
    const scope = { tenantId: seeded.tenantId, agentId: seeded.agentId };
    const pick = (index: number) => ids[(index * 7919) % ids.length] ?? parentId;
    const child = ids.find((_, index) => (index + 1) % 10 === 0) ?? parentId;
    return {
      sessions,
      eventsPerSession,
      latencyMs: {
        "session_list (page of 20)": await measureLatency(iterations, () =>
          listAgentSessions(db, { ...scope, limit: 20 }),
        ),
        "session_list has_outcome": await measureLatency(iterations, () =>
          listAgentSessions(db, { ...scope, limit: 20, hasOutcome: true }),
        ),
        "session_list active_minutes": await measureLatency(iterations, () =>
          listAgentSessions(db, { ...scope, limit: 20, activeMinutes: 60 }),
        ),
        "session_list lineage=related": await measureLatency(iterations, () =>
          listAgentSessions(db, {
            ...scope,
            limit: 20,
            near: { sessionId: child, parentSessionId: parentId, lineage: "related" },
          }),
        ),
        "session lookup (snapshot, setup)": await measureLatency(iterations, (index) =>
          findAgentSession(db, scope, pick(index)),
        ),
        "session_get_events (page of 20)": await measureLatency(iterations, (index) =>
          readEvents(db, { tenantId: seeded.tenantId, sessionId: pick(index), limit: 20 }),
        ),
        "history size (describe_context)": await measureLatency(iterations, (index) =>
          sessionHistoryChars(db, { tenantId: seeded.tenantId, sessionId: pick(index) }),
        ),
      },
    };
  } finally {
    await testDb.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runNavigationBench().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
