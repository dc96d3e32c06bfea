import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Agent, ApiError, ApiKey, ApiKeyPage, CreatedApiKey, Session } from "@wakeloop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentBody, type GatewayFixture, startGateway } from "../testing/gateway-fixture";
import { hashApiKey } from "./api-key-secret";

let gw: GatewayFixture;
let owner: string;

beforeAll(async () => {
  gw = await startGateway();
  owner = gw.tenant.ownerKey;
});
afterAll(async () => {
  await gw?.close();
});

async function mintKey(role: "owner" | "member", name = `${role} key`) {
  const response = await gw.request("POST", "/v1/api_keys", { key: owner, body: { role, name } });
  expect(response.status).toBe(200);
  return CreatedApiKey.parse(response.body);
}

function errorType(body: unknown) {
  return ApiError.parse(body).error.type;
}

describe("authentication", () => {
  it("answers 401 without a key and with an unknown key", async () => {
    const missing = await gw.request("GET", "/v1/agents");
    expect(missing.status).toBe(401);
    expect(errorType(missing.body)).toBe("authentication_error");

    const unknown = await gw.request("GET", "/v1/agents", { key: "wl_not-a-real-key" });
    expect(unknown.status).toBe(401);
  });

  it("accepts the key as a bearer token or in x-api-key", async () => {
    expect((await gw.request("GET", "/v1/agents", { key: owner })).status).toBe(200);
    expect((await gw.request("GET", "/v1/agents", { headers: { "x-api-key": owner } })).status).toBe(200);
  });

  it("stores only the key's sha256 and a short prefix, and shows the secret once", async () => {
    const created = await mintKey("member");
    expect(created.key).toMatch(/^wl_[A-Za-z0-9_-]{43,}$/);
    const row = await gw.db
      .selectFrom("api_keys")
      .selectAll()
      .where("id", "=", created.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashApiKey(created.key));
    expect(row.key_prefix).toBe(created.key_prefix);
    expect(created.key.startsWith(row.key_prefix)).toBe(true);
    expect(row.key_prefix.length).toBeLessThan(16);

    const listed = ApiKeyPage.parse((await gw.request("GET", "/v1/api_keys", { key: owner })).body);
    const entry = listed.data.find((key) => key.id === created.id);
    expect(entry).toEqual(ApiKey.parse(created));
    expect(JSON.stringify(listed)).not.toContain(created.key);
  });

  it("answers 401 for a revoked key, at once", async () => {
    const member = await mintKey("member");
    expect((await gw.request("GET", "/v1/sessions", { key: member.key })).status).toBe(200);
    const revoked = await gw.request("DELETE", `/v1/api_keys/${member.id}`, { key: owner });
    expect(revoked.status).toBe(200);
    expect(ApiKey.parse(revoked.body).revoked_at).not.toBeNull();
    expect((await gw.request("GET", "/v1/sessions", { key: member.key })).status).toBe(401);
  });

  it("refuses to revoke the tenant's last live owner key", async () => {
    const tenant = await gw.newTenant("lonely owner");
    const keys = ApiKeyPage.parse((await gw.request("GET", "/v1/api_keys", { key: tenant.ownerKey })).body);
    const [only] = keys.data;
    const refused = await gw.request("DELETE", `/v1/api_keys/${only?.id}`, { key: tenant.ownerKey });
    expect(refused.status).toBe(409);
    expect((await gw.request("GET", "/v1/agents", { key: tenant.ownerKey })).status).toBe(200);
  });
});

describe("roles", () => {
  it("lets a member read agents and use sessions, and nothing an owner alone may do (403)", async () => {
    const agent = Agent.parse(
      (await gw.request("POST", "/v1/agents", { key: owner, body: agentBody() })).body,
    );
    const member = (await mintKey("member")).key;

    expect((await gw.request("GET", "/v1/agents", { key: member })).status).toBe(200);
    expect((await gw.request("GET", `/v1/agents/${agent.id}`, { key: member })).status).toBe(200);
    expect((await gw.request("GET", "/v1/environments", { key: member })).status).toBe(200);
    const session = await gw.request("POST", "/v1/sessions", { key: member, body: { agent: agent.id } });
    expect(session.status).toBe(200);
    const sessionId = Session.parse(session.body).id;
    const posted = await gw.request("POST", `/v1/sessions/${sessionId}/events`, {
      key: member,
      body: { events: [{ type: "user.message", content: [{ type: "text", text: "hi" }] }] },
    });
    expect(posted.status).toBe(202);

    const forbidden = [
      await gw.request("POST", "/v1/agents", { key: member, body: agentBody() }),
      await gw.request("POST", `/v1/agents/${agent.id}`, { key: member, body: { system: "x" } }),
      await gw.request("POST", `/v1/agents/${agent.id}/archive`, { key: member }),
      await gw.request("POST", "/v1/environments", { key: member, body: { name: "env" } }),
      await gw.request("POST", "/v1/api_keys", { key: member, body: { role: "owner" } }),
      await gw.request("GET", "/v1/api_keys", { key: member }),
    ];
    for (const response of forbidden) {
      expect(response.status).toBe(403);
      expect(errorType(response.body)).toBe("permission_error");
    }
  });

  it("lets an owner mint another owner key that can do everything", async () => {
    const second = (await mintKey("owner")).key;
    expect((await gw.request("POST", "/v1/agents", { key: second, body: agentBody() })).status).toBe(200);
    expect((await gw.request("GET", "/v1/api_keys", { key: second })).status).toBe(200);
  });

  it("checks the key before the body: no key and bad JSON is a 401, not a 400", async () => {
    const response = await gw.request("POST", "/v1/agents", { rawBody: "{not json" });
    expect(response.status).toBe(401);
  });
});

describe("create-tenant CLI", () => {
  it("creates a tenant and prints a working owner key", async () => {
    const cli = fileURLToPath(new URL("../cli/create-tenant.ts", import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", cli, "--name", "acme", "--database-url", gw.database.url, "--json"],
      { timeout: 60_000 },
    );
    const printed = JSON.parse(stdout) as {
      tenant: { id: string; name: string };
      owner_key: { key: string };
    };
    expect(printed.tenant.name).toBe("acme");
    const listed = await gw.request("GET", "/v1/api_keys", { key: printed.owner_key.key });
    expect(listed.status).toBe(200);
    expect(ApiKeyPage.parse(listed.body).data.map((key) => key.role)).toEqual(["owner"]);
  });

  it("answers --help with its usage and an unknown option with a one-line reason, never a stack trace", async () => {
    const cli = fileURLToPath(new URL("../cli/create-tenant.ts", import.meta.url));
    const help = await promisify(execFile)(process.execPath, ["--import", "tsx", cli, "--help"]);
    expect(help.stdout).toMatch(/^usage: npm run tenant -- --name <name>/);
    expect(help.stdout).toContain("OWNER_DATABASE_URL");
    const refused = promisify(execFile)(process.execPath, ["--import", "tsx", cli, "--nme", "acme"]);
    await expect(refused).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^create-tenant: .*'--nme'/),
    });
    await expect(refused).rejects.not.toMatchObject({ stderr: expect.stringContaining("    at ") });
  });

  it("exits with usage when no name is given", async () => {
    const cli = fileURLToPath(new URL("../cli/create-tenant.ts", import.meta.url));
    await expect(
      promisify(execFile)(process.execPath, ["--import", "tsx", cli, "--database-url", gw.database.url]),
    ).rejects.toMatchObject({ code: 2 });
  });
});
