import { newId, runAgentSql } from "@wakeloop/db";
import { Platform } from "@wakeloop/testing";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/*
 * Issue #8, point 7: tenant isolation holds in Postgres, not only in each query's WHERE clause.
 * (a) Every API route with a path id, called by tenant B with tenant A's ids, answers 404 — the route
 *     list comes from the OpenAPI document, so a new route is attacked without editing this file.
 * (b) Connected as the role the services use, a transaction scoped to another tenant (or to none) sees
 *     no row of any tenant table, cannot write one for another tenant, and cannot point a row of its
 *     own tenant at another tenant's row.
 */

interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: unknown }>>;
}

/** Valid bodies for the routes that take one, so a 404 cannot hide behind a 400. */
const BODIES: Record<string, unknown> = {
  "POST /v1/agents/{id}": { name: "taken over" },
  "POST /v1/agents/{id}/rollback": { version: 1 },
  "POST /v1/environments/{id}": { name: "taken over" },
  "PUT /v1/agents/{id}/memory/{store}/entry": { content: "taken over" },
  "POST /v1/agents/{id}/resources/restore": { version_id: "subv_seeded" },
  "POST /v1/agents/{id}/scheduled_tasks": { name: "taken over", task: "report", cron: "0 9 * * *" },
  "POST /v1/sessions/{id}": { title: "taken over" },
  "POST /v1/sessions/{id}/events": {
    events: [{ type: "user.message", content: [{ type: "text", text: "whose session is this?" }] }],
  },
};

let platform: Platform;
let other: { tenantId: string; apiKey: string };
/** Tenant A's ids, by the collection that names them in a path (`/v1/<collection>/{id}`). */
const owned: Record<string, string> = {};

async function asOther(method: string, path: string, body?: unknown): Promise<number> {
  // Read the status only: a stream that wrongly opened must not hang the test.
  const controller = new AbortController();
  const response = await fetch(`${platform.baseUrl}${path}`, {
    method,
    signal: controller.signal,
    headers: {
      authorization: `Bearer ${other.apiKey}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  controller.abort();
  return response.status;
}

beforeAll(async () => {
  platform = await Platform.start({ workers: 1 });
  other = await platform.createTenant("other");

  const agent = await platform.request("POST", "/v1/agents", { name: "a", model: platform.fakeModel() });
  const environment = await platform.request("POST", "/v1/environments", { name: "env" });
  const session = await platform.request("POST", "/v1/sessions", {
    agent: agent.body.id,
    environment_id: environment.body.id,
  });
  const key = await platform.request("POST", "/v1/api_keys", { name: "a member", role: "member" });
  const credential = await platform.request("PUT", "/v1/provider_credentials/anthropic", {
    api_key: "sk-ant-tenant-a-own-key-0123456789",
  });
  const task = await platform.request("POST", `/v1/agents/${agent.body.id}/scheduled_tasks`, {
    name: "daily",
    task: "report",
    cron: "0 9 * * *",
  });
  for (const response of [agent, environment, session, key, credential, task]) {
    expect(response.status).toBe(200);
  }
  owned.scheduledTask = task.body.id;
  Object.assign(owned, {
    agents: agent.body.id,
    environments: environment.body.id,
    sessions: session.body.id,
    api_keys: key.body.id,
  });
  // A finished wake, so the session has events, a wake, spans, an idempotency record and memory (a
  // write by a tool call).
  platform.fake.enqueue(
    { toolCalls: [{ name: "memory_write", input: { target: "tenant-a.md", content: "tenant A's note" } }] },
    { text: "noted" },
  );
  const sent = await platform.request(
    "POST",
    `/v1/sessions/${session.body.id}/events`,
    { events: [{ type: "user.message", content: [{ type: "text", text: "hello" }] }] },
    { "idempotency-key": "first" },
  );
  expect(sent.status).toBe(202);
  await platform.waitForIdle(session.body.id, "end_turn", 0, 60_000);
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe("every API route, called with another tenant's ids", () => {
  it("answers 404, never 200 or 403", async () => {
    const document = await platform.request("GET", "/v1/openapi.json");
    const paths = (document.body as OpenApiDocument).paths;
    const attacked: string[] = [];
    for (const [path, operations] of Object.entries(paths)) {
      const collection = path.match(/^\/v1\/(\w+)\/\{id\}/)?.[1];
      if (collection === undefined) continue;
      const id = owned[collection];
      expect(id, `no id of tenant A for ${path}; create one in beforeAll`).toBeDefined();
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path}`;
        const body = BODIES[route];
        if (operation.requestBody !== undefined) {
          expect(body, `${route} takes a body; add a valid one to BODIES`).toBeDefined();
        }
        const status = await asOther(method.toUpperCase(), path.replace("{id}", id ?? ""), body);
        attacked.push(`${route} → ${status}`);
      }
    }
    expect(attacked.length).toBeGreaterThanOrEqual(15);
    expect(attacked.filter((line) => !line.endsWith("→ 404"))).toEqual([]);
  });

  it("refuses another tenant's agent and environment in a new session with 404", async () => {
    const agent = await fetch(`${platform.baseUrl}/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "b", model: platform.fakeModel() }),
    }).then((response) => response.json() as Promise<{ id: string }>);
    expect(await asOther("POST", "/v1/sessions", { agent: owned.agents })).toBe(404);
    expect(
      await asOther("POST", "/v1/sessions", { agent: agent.id, environment_id: owned.environments }),
    ).toBe(404);
  });
});

describe("session navigation tools", () => {
  it("find none of another tenant's sessions, by id or in a listing", async () => {
    const call = (path: string, body: unknown) =>
      fetch(`${platform.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${other.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<{ id: string }>);
    const agent = await call("/v1/agents", { name: "b", model: platform.fakeModel() });
    const session = await call("/v1/sessions", { agent: agent.id });
    const target = owned.sessions ?? "";
    platform.fake.enqueue(
      {
        toolCalls: [
          { name: "session_list", input: {} },
          { name: "session_get_snapshot", input: { session_id: target } },
          { name: "session_get_events", input: { session_id: target } },
          { name: "session_get_trace", input: { session_id: target } },
          { name: "agent_describe_setup", input: { session_id: target } },
        ],
      },
      { text: "nothing there" },
    );
    await call(`/v1/sessions/${session.id}/events`, {
      events: [{ type: "user.message", content: [{ type: "text", text: "look around" }] }],
    });
    // Tenant A's key cannot read tenant B's session: read its events as the database owner.
    const events = () =>
      platform.db
        .selectFrom("session_events")
        .select(["type", "body"])
        .where("session_id", "=", session.id)
        .orderBy("seq")
        .execute();
    await expect
      .poll(async () => (await events()).some((row) => row.type === "session.status_idle"), {
        timeout: 60_000,
      })
      .toBe(true);
    const answers = (await events())
      .filter((row) => row.type === "agent.tool_result")
      .map((row) => row.body as { is_error: boolean; content: Array<{ text: string }> });
    expect(answers).toHaveLength(5);
    const [listing, ...reads] = answers;
    expect(JSON.parse(listing?.content[0]?.text ?? "").sessions.map((s: { id: string }) => s.id)).toEqual([
      session.id,
    ]);
    for (const read of reads) {
      expect(read.is_error).toBe(true);
      expect(read.content[0]?.text).toBe(`session ${target} is not a session of this agent`);
    }
  });
});

describe("the services' database role", () => {
  let client: pg.Client;

  /** Tables with a tenant_id column: the tables row security must cover. */
  async function tenantTables(): Promise<string[]> {
    const result = await sql<{ table_name: string }>`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name`.execute(platform.db);
    return result.rows.map((row) => row.table_name);
  }

  /** Runs `work` in a transaction of the service role scoped to `tenant` (unset when null). */
  async function scoped<T>(tenant: string | null, work: () => Promise<T>): Promise<T> {
    await client.query("BEGIN");
    try {
      if (tenant !== null) await client.query("SELECT set_config('wakeloop.tenant_id', $1, true)", [tenant]);
      return await work();
    } finally {
      await client.query("ROLLBACK");
    }
  }

  /** Rows of `table` the transaction sees: all of them, or those of tenant A. */
  async function count(table: string, of: "all" | "tenant A" = "all"): Promise<number> {
    const from = `SELECT count(*)::int AS n FROM ${client.escapeIdentifier(table)}`;
    const result =
      of === "all"
        ? await client.query(from)
        : await client.query(`${from} WHERE tenant_id = $1`, [platform.tenantId]);
    return result.rows[0].n;
  }

  async function failure(statement: string, values: unknown[]): Promise<string> {
    return scoped(other.tenantId, async () => {
      try {
        await client.query(statement, values);
        return "succeeded";
      } catch (error) {
        return (error as pg.DatabaseError).code ?? String(error);
      }
    });
  }

  beforeAll(async () => {
    // Rows the API run did not make, so that no tenant table of tenant A is empty.
    const tenantId = platform.tenantId;
    const sessionId = owned.sessions ?? "";
    const wake = await platform.db
      .selectFrom("wakes")
      .select("id")
      .where("session_id", "=", sessionId)
      .executeTakeFirstOrThrow();
    const event = await platform.db
      .selectFrom("session_events")
      .select("id")
      .where("session_id", "=", sessionId)
      .executeTakeFirstOrThrow();
    const batchId = newId("toolBatch");
    await platform.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("tool_batches")
        .values({ id: batchId, tenant_id: tenantId, session_id: sessionId, wake_id: wake.id, plan: "{}" })
        .execute();
      await trx
        .insertInto("tool_calls")
        .values({
          id: event.id,
          tenant_id: tenantId,
          session_id: sessionId,
          wake_id: wake.id,
          batch_id: batchId,
          name: "get_state",
          input: "{}",
          status: "succeeded",
          idempotent: true,
        })
        .execute();
      await trx
        .insertInto("schedule_firings")
        .values({
          tenant_id: tenantId,
          schedule_id: owned.scheduledTask ?? "",
          occurrence_at: new Date(),
          outcome: "skipped",
          session_id: null,
          fired_at: new Date(),
        })
        .execute();
      await trx
        .insertInto("agent_state")
        .values({ tenant_id: tenantId, agent_id: owned.agents ?? "", key: "k", value: "1" })
        .execute();
      await trx
        .insertInto("substrate_versions")
        .values({
          id: "subv_seeded",
          tenant_id: tenantId,
          agent_id: owned.agents ?? "",
          path: "seeded.md",
          content: "tenant A's substrate",
          content_hash: "sha256:seeded",
          size_bytes: 20,
          restored_from_version_id: null,
          author_kind: "api",
          author_session_id: null,
          author_wake_id: null,
          author_tool_call_id: null,
          author_api_key_id: null,
        })
        .execute();
      await trx
        .insertInto("substrate_files")
        .values({
          tenant_id: tenantId,
          agent_id: owned.agents ?? "",
          path: "seeded.md",
          current_version_id: "subv_seeded",
          content_hash: "sha256:seeded",
          size_bytes: 20,
        })
        .execute();
      await trx
        .insertInto("agent_code")
        .values({
          id: "acode_seeded",
          tenant_id: tenantId,
          agent_id: owned.agents ?? "",
          kind: "tool",
          name: "seeded",
          version: 1,
        })
        .execute();
      await trx
        .insertInto("agent_code_versions")
        .values({
          tenant_id: tenantId,
          code_id: "acode_seeded",
          version: 1,
          description: "seeded",
          code: "return 1;",
          schema: null,
          requires: "[]",
          session_id: null,
          tool_call_id: null,
        })
        .execute();
      await trx
        .insertInto("vault_secrets")
        .values({ tenant_id: tenantId, name: "seeded", key_id: "k1", sealed: Buffer.from("sealed") })
        .execute();
      await trx
        .insertInto("outcomes")
        .values({ id: "outc_seeded", tenant_id: tenantId, session_id: sessionId, title: "t", criteria: "[]" })
        .execute();
      await trx
        .insertInto("outcome_evaluations")
        .values({
          tenant_id: tenantId,
          outcome_id: "outc_seeded",
          iteration: 1,
          session_id: sessionId,
          evaluator: "rubric",
          score: 1,
          passed: true,
          feedback: "seeded",
          criteria_results: "[]",
        })
        .execute();
      await trx
        .insertInto("spans")
        .values({
          trace_id: "a".repeat(32),
          span_id: "b".repeat(16),
          tenant_id: tenantId,
          name: "seeded",
          kind: "internal",
          service_name: "test",
          start_time: new Date(),
          end_time: new Date(),
          status_code: "ok",
          attributes: "{}",
          events: "[]",
        })
        .execute();
      // Embeddings are off on this platform: the queue row and the vector as the embedder writes them.
      const agentId = owned.agents ?? "";
      await sql`INSERT INTO embedding_backlog (tenant_id, agent_id, kind, ref, model)
        VALUES (${tenantId}, ${agentId}, 'event', ${event.id}, 'seeded')`.execute(trx);
      await sql`INSERT INTO retrieval_embeddings (tenant_id, agent_id, kind, ref, session_id, model, vector)
        VALUES (${tenantId}, ${agentId}, 'event', ${event.id}, ${sessionId}, 'seeded', ${Buffer.from([0, 0, 128, 63])})`.execute(
        trx,
      );
    });
    // The agent's own SQL schema, made the way db_sql makes it.
    const agentSql = new pg.Pool({ connectionString: platform.database.agentSqlUrl, max: 1 });
    await runAgentSql(
      agentSql,
      { tenantId, agentId: owned.agents ?? "" },
      { sql: "CREATE TABLE seeded (x int)", params: [] },
      { statementTimeoutMs: 5_000, maxRows: 10, quotaBytes: 2 ** 20, maxObjects: 500 },
    ).finally(() => agentSql.end());
    client = new pg.Client({ connectionString: platform.database.appUrl });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
  });

  it("sees no row of any tenant table under another tenant's setting or none", async () => {
    const tables = await tenantTables();
    expect(tables).toEqual(expect.arrayContaining(["agents", "sessions", "session_events", "outbox"]));
    for (const table of tables) {
      const counted = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE tenant_id = ${platform.tenantId}`.execute(
        platform.db,
      );
      const owner = { n: counted.rows[0]?.n ?? 0 };
      // The outbox is drained by the relay; every other table holds tenant A's rows by now.
      if (table !== "outbox") expect(owner.n, `${table} holds rows of tenant A`).toBeGreaterThan(0);
      // Tenant B has rows of its own by now; none of A's may show, even asked for by A's id.
      expect(await scoped(other.tenantId, () => count(table, "tenant A")), `${table} as tenant B`).toBe(0);
      expect(await scoped(null, () => count(table)), `${table} with no tenant set`).toBe(0);
      expect(await scoped("", () => count(table)), `${table} with an empty tenant`).toBe(0);
      // The same role does see the rows when scoped to their tenant: the policy keys on the setting.
      expect(await scoped(platform.tenantId, () => count(table)), `${table} as tenant A`).toBe(owner.n);
    }
  });

  it("cannot write rows for another tenant or change theirs", async () => {
    expect(
      await failure("INSERT INTO agents (id, tenant_id, name, latest_version) VALUES ($1, $2, 'x', 1)", [
        newId("agent"),
        platform.tenantId,
      ]),
    ).toBe("42501");
    const changed = await scoped(other.tenantId, async () => {
      const result = await client.query("UPDATE sessions SET updated_at = now() WHERE id = $1", [
        owned.sessions,
      ]);
      return result.rowCount;
    });
    expect(changed).toBe(0);
  });

  it("cannot point its own rows at another tenant's rows", async () => {
    const ownAgent = newId("agent");
    const session = (column: string, value: string) =>
      failure(
        `WITH a AS (INSERT INTO agents (id, tenant_id, name, latest_version) VALUES ($1, $2, 'b', 1)),
         v AS (INSERT INTO agent_versions (agent_id, version, tenant_id, spec) VALUES ($1, 1, $2, '{}'))
         INSERT INTO sessions (id, tenant_id, agent_id, agent_version, ${column}, status, state)
         VALUES ($3, $2, $1, 1, $4, 'idle', '{}')`,
        [ownAgent, other.tenantId, newId("session"), value],
      );
    expect(await session("environment_id", owned.environments ?? "")).toBe("23503");
    expect(await session("parent_session_id", owned.sessions ?? "")).toBe("23503");
    expect(
      await failure(
        "INSERT INTO sessions (id, tenant_id, agent_id, agent_version, status, state) VALUES ($1, $2, $3, 1, 'idle', '{}')",
        [newId("session"), other.tenantId, owned.agents],
      ),
    ).toBe("23503");
    expect(
      await failure(
        "INSERT INTO wakes (id, tenant_id, session_id, status, reason) VALUES ($1, $2, $3, 'queued', 'user_message')",
        [newId("wake"), other.tenantId, owned.sessions],
      ),
    ).toBe("23503");
  });

  it("cannot bypass row security and owns nothing", async () => {
    const role = await client.query(
      "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user",
    );
    expect(role.rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
    const owns = await client.query(
      "SELECT count(*)::int AS n FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)",
    );
    expect(owns.rows[0].n).toBe(0);
  });
});
