import { pathToFileURL } from "node:url";
import {
  createTestDatabase,
  type LatencySummary,
  measureLatency,
  seedAgent,
  summarize,
} from "@wakeloop/testing";
import pg from "pg";
import { type AgentSqlLimits, describeAgentSchema, runAgentSql } from "../src/agent-sql";

/*
 * db_sql / db_schema on a real Postgres, in a throwaway database:   npx tsx packages/db/bench/agent-sql-bench.ts
 * Each call is the whole guarded transaction: enter the agent's role (a grant), the statement under its
 * timeout, leave (revoke, schema size against the quota), commit. One agent's calls one after another,
 * then 8 agents side by side on a pool of 4 (the grants of different agents must not queue on each other).
 */

export interface AgentSqlBenchOptions {
  iterations?: number;
}

export interface AgentSqlBenchResult {
  latencyMs: Record<string, LatencySummary>;
  parallel: { agents: number; calls: number; callsPerSecond: number; latencyMs: LatencySummary };
}

const LIMITS: AgentSqlLimits = {
  statementTimeoutMs: 5_000,
  maxRows: 1_000,
  quotaBytes: 100 * 2 ** 20,
  maxObjects: 500,
};

export async function runAgentSqlBench(options: AgentSqlBenchOptions = {}): Promise<AgentSqlBenchResult> {
  const iterations = options.iterations ?? 300;
  const testDb = await createTestDatabase({ max: 2 });
  const pool = new pg.Pool({ connectionString: testDb.agentSqlUrl, max: 4 });
  try {
    const agents = await Promise.all(Array.from({ length: 8 }, () => seedAgent(testDb.db)));
    const scopes = agents.map((agent) => ({ tenantId: agent.tenantId, agentId: agent.agentId }));
    const scope = scopes[0] ?? { tenantId: "", agentId: "" };
    const sql = (text: string, params: unknown[] = []) =>
      runAgentSql(pool, scope, { sql: text, params }, LIMITS);
    for (const each of scopes) {
      await runAgentSql(
        pool,
        each,
        { sql: "CREATE TABLE items (id serial PRIMARY KEY, name text, n int)", params: [] },
        LIMITS,
      );
    }
    await sql("INSERT INTO items (name, n) SELECT 'item ' || g, g FROM generate_series(1, 5000) AS g");
    const latencyMs = {
      "db_sql INSERT one row": await measureLatency(iterations, (index) =>
        sql("INSERT INTO items (name, n) VALUES (?, ?)", [`row ${index}`, index]),
      ),
      "db_sql SELECT one row by key": await measureLatency(iterations, (index) =>
        sql("SELECT * FROM items WHERE id = ?", [1 + (index % 5000)]),
      ),
      "db_sql SELECT capped at 1000 rows": await measureLatency(Math.ceil(iterations / 3), () =>
        sql("SELECT * FROM items"),
      ),
      db_schema: await measureLatency(Math.ceil(iterations / 3), () =>
        describeAgentSchema(pool, scope, LIMITS),
      ),
    };
    const calls = iterations * 2;
    const samples: number[] = [];
    const started = performance.now();
    await Promise.all(
      scopes.map(async (each, agent) => {
        for (let index = agent; index < calls; index += scopes.length) {
          const before = performance.now();
          await runAgentSql(
            pool,
            each,
            { sql: "INSERT INTO items (name, n) VALUES (?, ?)", params: ["x", index] },
            LIMITS,
          );
          samples.push(performance.now() - before);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1_000;
    return {
      latencyMs,
      parallel: {
        agents: scopes.length,
        calls,
        callsPerSecond: Math.round(calls / seconds),
        latencyMs: summarize(samples),
      },
    };
  } finally {
    await pool.end();
    await testDb.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAgentSqlBench().then(
    (result) => console.log(JSON.stringify(result, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
