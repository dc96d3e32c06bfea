import {
  Agent,
  AgentPage,
  AgentVersionDiff,
  AgentVersionPage,
  ApiError,
  Environment,
  EnvironmentPage,
  Session,
} from "@wakeloop/contracts";
import { createAgentSqlPool, runAgentSql } from "@wakeloop/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";

let gw: GatewayFixture;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.tenant.ownerKey;
});
afterAll(async () => {
  await gw?.close();
});

async function createAgent(overrides: Record<string, unknown> = {}) {
  const response = await gw.request("POST", "/v1/agents", { key, body: agentBody(overrides) });
  expect(response.status).toBe(200);
  return Agent.parse(response.body);
}

describe("agents", () => {
  it("creates version 1 with the spec's defaults filled in", async () => {
    const agent = await createAgent({ system: "be brief" });
    expect(agent).toMatchObject({ version: 1, name: "support bot", system: "be brief", tools: [] });
    expect(agent.model.max_output_tokens).toBe(4096);
    const fetched = await gw.request("GET", `/v1/agents/${agent.id}`, { key });
    expect(Agent.parse(fetched.body)).toEqual(agent);
  });

  it("makes an immutable new version on update, merging the given fields over the latest spec", async () => {
    const v1 = await createAgent({ system: "v1 prompt", metadata: { team: "support" } });
    const updated = await gw.request("POST", `/v1/agents/${v1.id}`, { key, body: { system: "v2 prompt" } });
    expect(updated.status).toBe(200);
    const v2 = Agent.parse(updated.body);
    expect(v2).toMatchObject({ id: v1.id, version: 2, system: "v2 prompt", metadata: { team: "support" } });

    expect(Agent.parse((await gw.request("GET", `/v1/agents/${v1.id}`, { key })).body).version).toBe(2);
    const old = Agent.parse((await gw.request("GET", `/v1/agents/${v1.id}?version=1`, { key })).body);
    expect(old.system).toBe("v1 prompt");
    expect((await gw.request("GET", `/v1/agents/${v1.id}?version=3`, { key })).status).toBe(404);

    const versions = AgentVersionPage.parse(
      (await gw.request("GET", `/v1/agents/${v1.id}/versions`, { key })).body,
    );
    expect(versions.data.map((agent) => [agent.version, agent.system])).toEqual([
      [1, "v1 prompt"],
      [2, "v2 prompt"],
    ]);
    const paged = AgentVersionPage.parse(
      (await gw.request("GET", `/v1/agents/${v1.id}/versions?limit=1`, { key })).body,
    );
    expect(paged).toMatchObject({ next_after_version: 1, data: [{ version: 1 }] });
  });

  it("diffs two versions and rolls back to one as a new latest version", async () => {
    const v1 = await createAgent({ system: "Be terse.\nUse metric units." });
    await gw.request("POST", `/v1/agents/${v1.id}`, {
      key,
      body: { system: "Be terse.\nUse imperial units." },
    });
    const diff = await gw.request("GET", `/v1/agents/${v1.id}/versions/diff`, { key });
    expect(diff.status).toBe(200);
    expect(AgentVersionDiff.parse(diff.body)).toMatchObject({ from: 1, to: 2, changes: [] });
    expect((diff.body as AgentVersionDiff).system_diff).toContain("+Use imperial units.");

    const rolled = await gw.request("POST", `/v1/agents/${v1.id}/rollback`, { key, body: { version: 1 } });
    expect(rolled.status).toBe(200);
    expect(Agent.parse(rolled.body)).toMatchObject({ version: 3, system: v1.system });
    const back = await gw.request("GET", `/v1/agents/${v1.id}/versions/diff?from=1&to=3`, { key });
    expect(back.body).toMatchObject({ system_diff: "", changes: [] });
    // Rolling back to what the latest already is makes no version.
    const again = await gw.request("POST", `/v1/agents/${v1.id}/rollback`, { key, body: { version: 3 } });
    expect(Agent.parse(again.body).version).toBe(3);
  });

  it("answers a rollback or diff naming a missing version with a 404 or 400 and stores nothing", async () => {
    const agent = await createAgent();
    const missing = await gw.request("POST", `/v1/agents/${agent.id}/rollback`, {
      key,
      body: { version: 9 },
    });
    expect(missing.status).toBe(404);
    const invalid = await gw.request("POST", `/v1/agents/${agent.id}/rollback`, {
      key,
      body: { version: 0 },
    });
    expect(invalid.status).toBe(400);
    expect((await gw.request("GET", `/v1/agents/${agent.id}/versions/diff?from=5`, { key })).status).toBe(
      404,
    );
    expect(Agent.parse((await gw.request("GET", `/v1/agents/${agent.id}`, { key })).body).version).toBe(1);
  });

  it("makes no version for an update that changes nothing", async () => {
    const agent = await createAgent({ system: "same" });
    const response = await gw.request("POST", `/v1/agents/${agent.id}`, { key, body: { system: "same" } });
    expect(Agent.parse(response.body).version).toBe(1);
  });

  it("pins a session to the version it started with", async () => {
    const agent = await createAgent({ budget: { max_total_tokens: 5_000 } });
    const first = Session.parse(
      (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
    );
    await gw.request("POST", `/v1/agents/${agent.id}`, { key, body: { system: "changed" } });
    const second = Session.parse(
      (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).body,
    );
    const pinnedOld = Session.parse(
      (await gw.request("POST", "/v1/sessions", { key, body: { agent: { id: agent.id, version: 1 } } })).body,
    );

    expect(first.agent).toEqual({ id: agent.id, version: 1 });
    expect(second.agent).toEqual({ id: agent.id, version: 2 });
    expect(pinnedOld.agent).toEqual({ id: agent.id, version: 1 });
    expect(
      Session.parse((await gw.request("GET", `/v1/sessions/${first.id}`, { key })).body).agent.version,
    ).toBe(1);
    // The budget defaults to the agent's.
    expect(first.budget).toEqual({ max_total_tokens: 5_000 });
  });

  it("rejects an unknown tool name in the policy with a 400 listing the valid names", async () => {
    const response = await gw.request("POST", "/v1/agents", {
      key,
      body: agentBody({ tool_policy: { deny: ["shell_runn"] } }),
    });
    expect(response.status).toBe(400);
    const { error } = ApiError.parse(response.body);
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toContain("shell_runn");
    expect(error.details).toMatchObject({ valid_tools: expect.arrayContaining(["ask_user", "get_state"]) });

    const agent = await createAgent();
    const update = await gw.request("POST", `/v1/agents/${agent.id}`, {
      key,
      body: { tools: [{ type: "builtin", configs: [{ name: "no_such_tool", enabled: true }] }] },
    });
    expect(update.status).toBe(400);
    expect(Agent.parse((await gw.request("GET", `/v1/agents/${agent.id}`, { key })).body).version).toBe(1);
  });

  it("archives: hidden from the list, readable, starts no sessions, archiving twice is fine", async () => {
    const agent = await createAgent({ name: "to archive" });
    expect((await gw.request("POST", `/v1/agents/${agent.id}/archive`, { key })).status).toBe(200);
    expect((await gw.request("POST", `/v1/agents/${agent.id}/archive`, { key })).status).toBe(200);
    const listed = AgentPage.parse((await gw.request("GET", "/v1/agents?limit=200", { key })).body);
    expect(listed.data.map((a) => a.id)).not.toContain(agent.id);
    const all = AgentPage.parse(
      (await gw.request("GET", "/v1/agents?limit=200&include_archived=true", { key })).body,
    );
    expect(all.data.map((a) => a.id)).toContain(agent.id);
    expect((await gw.request("GET", `/v1/agents/${agent.id}`, { key })).status).toBe(200);
    expect((await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id } })).status).toBe(409);
    expect((await gw.request("POST", `/v1/agents/${agent.id}`, { key, body: { system: "x" } })).status).toBe(
      409,
    );
  });

  it("drops the agent's SQL role and schema when it is archived; archiving again is harmless", async () => {
    const agent = await createAgent({ name: "with a database" });
    const scope = { tenantId: gw.tenant.id, agentId: agent.id };
    const limits = {
      statementTimeoutMs: 30_000,
      maxRows: 10,
      quotaBytes: 10 * 1024 * 1024,
      maxObjects: 500,
    };
    const pool = createAgentSqlPool({ url: gw.database.agentSqlUrl, max: 1 });
    const owner = createAgentSqlPool({ url: gw.database.agentSqlOwnerUrl, max: 1 });
    try {
      await runAgentSql(pool, scope, { sql: "CREATE TABLE notes (body text)", params: [] }, limits);
      const role = await runAgentSql(pool, scope, { sql: "SELECT current_user", params: [] }, limits).then(
        (result) => (result.kind === "rows" ? result.rows[0]?.[0] : undefined),
      );
      const left = async () =>
        (
          await owner.query<{ roles: number; schemas: number }>(
            `SELECT (SELECT count(*)::int FROM pg_roles WHERE rolname = $1) AS roles,
                    (SELECT count(*)::int FROM pg_namespace WHERE nspname = $1) AS schemas`,
            [role],
          )
        ).rows[0];
      expect(await left()).toEqual({ roles: 1, schemas: 1 });

      expect((await gw.request("POST", `/v1/agents/${agent.id}/archive`, { key })).status).toBe(200);
      expect(await left()).toEqual({ roles: 0, schemas: 0 });
      expect((await gw.request("POST", `/v1/agents/${agent.id}/archive`, { key })).status).toBe(200);
      expect(await left()).toEqual({ roles: 0, schemas: 0 });
      await expect(runAgentSql(pool, scope, { sql: "SELECT 1", params: [] }, limits)).rejects.toMatchObject({
        message: expect.stringMatching(/is archived and its database was dropped/),
      });
    } finally {
      await pool.end();
      await owner.end();
    }
  });

  it("pages the list newest first", async () => {
    const tenant = await gw.newTenant("paging");
    const ids: string[] = [];
    for (const name of ["a", "b", "c"]) {
      const response = await gw.request("POST", "/v1/agents", {
        key: tenant.ownerKey,
        body: agentBody({ name }),
      });
      ids.push(Agent.parse(response.body).id);
    }
    const first = AgentPage.parse(
      (await gw.request("GET", "/v1/agents?limit=2", { key: tenant.ownerKey })).body,
    );
    expect(first.data.map((a) => a.name)).toEqual(["c", "b"]);
    const rest = AgentPage.parse(
      (
        await gw.request("GET", `/v1/agents?limit=2&after_id=${first.next_after_id}`, {
          key: tenant.ownerKey,
        })
      ).body,
    );
    expect(rest).toMatchObject({ data: [{ id: ids[0] }], next_after_id: null });
  });
});

describe("environments", () => {
  it("creates, updates (merging fields), archives, and validates the tool policy", async () => {
    const created = await gw.request("POST", "/v1/environments", {
      key,
      body: { name: "sandboxed", config: { memory_mb: 1024 }, metadata: { tier: "gold" } },
    });
    expect(created.status).toBe(200);
    const env = Environment.parse(created.body);
    expect(env.config).toMatchObject({ memory_mb: 1024, network: "none" });

    const updated = Environment.parse(
      (await gw.request("POST", `/v1/environments/${env.id}`, { key, body: { name: "renamed" } })).body,
    );
    expect(updated).toMatchObject({
      name: "renamed",
      metadata: { tier: "gold" },
      config: { memory_mb: 1024 },
    });

    const badPolicy = await gw.request("POST", "/v1/environments", {
      key,
      body: { name: "bad", tool_policy: { allow: ["group:nonexistent"] } },
    });
    expect(badPolicy.status).toBe(400);

    const agent = await createAgent();
    const session = await gw.request("POST", "/v1/sessions", {
      key,
      body: { agent: agent.id, environment_id: env.id },
    });
    expect(Session.parse(session.body).environment_id).toBe(env.id);
    await gw.request("POST", `/v1/environments/${env.id}/archive`, { key });
    expect(
      (await gw.request("POST", "/v1/sessions", { key, body: { agent: agent.id, environment_id: env.id } }))
        .status,
    ).toBe(409);
  });
});

describe("tenant isolation", () => {
  it("answers 404 for another tenant's agents, environments and sessions", async () => {
    const other = await gw.newTenant("other");
    const theirAgent = Agent.parse(
      (await gw.request("POST", "/v1/agents", { key: other.ownerKey, body: agentBody() })).body,
    );
    const theirEnv = Environment.parse(
      (await gw.request("POST", "/v1/environments", { key: other.ownerKey, body: { name: "theirs" } })).body,
    );
    const theirSession = Session.parse(
      (await gw.request("POST", "/v1/sessions", { key: other.ownerKey, body: { agent: theirAgent.id } }))
        .body,
    );

    const attempts = [
      await gw.request("GET", `/v1/agents/${theirAgent.id}`, { key }),
      await gw.request("POST", `/v1/agents/${theirAgent.id}`, { key, body: { system: "mine now" } }),
      await gw.request("GET", `/v1/agents/${theirAgent.id}/versions`, { key }),
      await gw.request("POST", `/v1/agents/${theirAgent.id}/archive`, { key }),
      await gw.request("GET", `/v1/environments/${theirEnv.id}`, { key }),
      await gw.request("POST", "/v1/sessions", { key, body: { agent: theirAgent.id } }),
      await gw.request("GET", `/v1/sessions/${theirSession.id}`, { key }),
      await gw.request("POST", `/v1/sessions/${theirSession.id}`, { key, body: { title: "x" } }),
      await gw.request("POST", `/v1/sessions/${theirSession.id}/archive`, { key }),
      await gw.request("GET", `/v1/sessions/${theirSession.id}/events`, { key }),
      await gw.request("GET", `/v1/sessions/${theirSession.id}/events/stream`, { key }),
      await gw.request("GET", `/v1/sessions/${theirSession.id}/pending`, { key }),
      await gw.request("POST", `/v1/sessions/${theirSession.id}/events`, {
        key,
        body: { events: [{ type: "user.interrupt" }] },
      }),
    ];
    for (const response of attempts) {
      expect(response.status).toBe(404);
      expect(ApiError.parse(response.body).error.type).toBe("not_found_error");
    }
    const mine = await gw.request("GET", "/v1/sessions?limit=200", { key });
    expect(JSON.stringify(mine.body)).not.toContain(theirSession.id);
    // Their session is untouched.
    const theirs = Session.parse(
      (await gw.request("GET", `/v1/sessions/${theirSession.id}`, { key: other.ownerKey })).body,
    );
    expect(theirs).toMatchObject({ status: "idle", last_seq: 0, title: null });
  });

  it("refuses an exec allowlist entry that could never match, naming it, and stores nothing", async () => {
    const count = async () =>
      EnvironmentPage.parse((await gw.request("GET", "/v1/environments", { key })).body).data.length;
    const before = await count();
    for (const entry of ["./git", "bin/git status", "/usr/bin/../bin/git", "  "]) {
      const refused = await gw.request("POST", "/v1/environments", {
        key,
        body: {
          name: "bad allowlist",
          config: { exec_security: "allowlist", exec_allowlist: ["ls", entry] },
        },
      });
      expect(refused.status, entry).toBe(400);
      expect(ApiError.parse(refused.body).error.message).toContain("exec_allowlist");
    }
    expect(await count()).toBe(before);
    const fine = await gw.request("POST", "/v1/environments", {
      key,
      body: { name: "ok", config: { exec_allowlist: ["git status", "/usr/bin/*", "npm run *"] } },
    });
    expect(fine.status).toBe(200);
  });
});
